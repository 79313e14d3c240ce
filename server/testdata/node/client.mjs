// Drives a regolith server with the official openai npm client: a chat completion, the
// same one streamed (same text), logprobs, a 400 for an unknown model. Prints "ok" and
// exits 0 when every check passes. Usage: node client.mjs BASE_URL MODEL
import OpenAI from "openai";

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL: baseURL + "/v1", apiKey: "none", maxRetries: 0 });
function check(cond, msg) {
  if (!cond) {
    console.error("FAIL: " + msg);
    process.exit(1);
  }
}
const params = {
  model,
  messages: [{ role: "system", content: "You are a helpful assistant." }, { role: "user", content: "What is a mixture of experts?" }],
  max_tokens: 10,
  temperature: 0,
  logprobs: true,
  top_logprobs: 2,
};
const r = await client.chat.completions.create(params);
check(r.choices.length === 1 && r.choices[0].message.role === "assistant", "one assistant choice");
check(r.usage.completion_tokens > 0 && r.usage.prompt_tokens > 10, "usage " + JSON.stringify(r.usage));
check(r.choices[0].logprobs.content.length === r.usage.completion_tokens, "a logprob per token");
let text = "";
let chunks = 0;
let usage = null;
const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
for await (const c of stream) {
  chunks++;
  if (c.usage) usage = c.usage;
  if (c.choices.length && c.choices[0].delta.content) text += c.choices[0].delta.content;
}
check(text === (r.choices[0].message.content ?? ""), `streamed ${JSON.stringify(text)} vs ${JSON.stringify(r.choices[0].message.content)}`);
check(chunks >= 3 && usage && usage.prompt_tokens_details.cached_tokens > 0, "stream usage " + JSON.stringify(usage));
try {
  await client.chat.completions.create({ ...params, model: "no-such-model" });
  check(false, "unknown model accepted");
} catch (e) {
  check(e.status === 400 && /does not exist/.test(e.message), "unknown model error: " + e);
}
const models = await client.models.list();
check(models.data.length === 1 && models.data[0].id === model, "models");
console.log("ok");
