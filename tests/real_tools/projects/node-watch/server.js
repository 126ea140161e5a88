// A project's own HTTP server, run under Node's own watch mode (`node --watch server.js`): the
// watching node restarts this one when a file changes. Its port comes from PORT.
const http = require("http");
http.createServer((req, res) => res.end("ok\n")).listen(Number(process.env.PORT), "127.0.0.1");
