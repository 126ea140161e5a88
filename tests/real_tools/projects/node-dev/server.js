// The plainest dev server: a project's own HTTP server, run by `npm run dev`. No tool Pier
// knows is in its argv; the dev script is what makes it one.
const http = require("http");
const port = Number(process.argv[2]);
http.createServer((req, res) => res.end("ok\n")).listen(port, "127.0.0.1");
