// The Probot baseline for bench/run: the equivalent of pitcrew's intake.
// Probot verifies X-Hub-Signature-256 and parses the event; the handler
// records the delivery id with SET NX (a redelivery is dropped) and pushes
// the event onto a Redis list for a worker, then Probot answers.
import http from "node:http";
import { Redis } from "ioredis";
import { createNodeMiddleware, createProbot } from "probot";

const redis = new Redis(process.env.REDIS_URL || "redis://127.0.0.1:6379");
const probot = createProbot({
  overrides: {
    appId: 1,
    privateKey: process.env.PRIVATE_KEY,
    secret: process.env.WEBHOOK_SECRET,
    logLevel: "warn",
  },
});

const app = (app) => {
  app.onAny(async (context) => {
    const first = await redis.set(`probot:delivery:${context.id}`, "1", "EX", 259200, "NX");
    if (first === null) return; // redelivered
    await redis.lpush("probot:queue", JSON.stringify({ name: context.name, id: context.id, payload: context.payload }));
  });
};

const middleware = await createNodeMiddleware(app, { probot, webhooksPath: "/api/github/hook" });
const port = Number(process.env.PORT || 8092);
http.createServer(middleware).listen(port, "127.0.0.1", () => console.log(`probot baseline on ${port}`));
