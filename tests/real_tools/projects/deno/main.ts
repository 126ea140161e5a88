// A tiny Deno server for Pier's real-tools suite; its port comes from PORT.
const port = Number(Deno.env.get("PORT") ?? "8000");
Deno.serve({ hostname: "127.0.0.1", port }, () => new Response("hello from deno\n"));
