# The smallest Rack app, served by Puma directly: `puma -b tcp://127.0.0.1:PORT config.ru`.
run ->(env) { [200, { "content-type" => "text/plain" }, ["ok\n"]] }
