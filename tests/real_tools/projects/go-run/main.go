// A std-only HTTP server, run the way Go developers run one while working on it: `go run .`.
// Its port comes from PORT.
package main

import (
	"fmt"
	"log"
	"net/http"
	"os"
)

func main() {
	addr := "127.0.0.1:" + os.Getenv("PORT")
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello from go run")
	})
	log.Printf("listening on %s", addr)
	log.Fatal(http.ListenAndServe(addr, nil))
}
