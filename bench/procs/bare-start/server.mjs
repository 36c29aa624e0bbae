// A bare node:http server: the baseline for starting the gateway. Answers
// /health with {"status":"ok"} on PORT (0: any free one).
import { createServer } from "node:http";

const server = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end('{"status":"ok"}');
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => console.log(`bare server listening on http://127.0.0.1:${server.address().port}`));
process.on("SIGTERM", () => process.exit(0));
