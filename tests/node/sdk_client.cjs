// The official Node SDKs as clients (issue #26): a streamed call per prompt, one after the
// other, as their users write it, each reduced to the shape tests/sdk_clients.py gives the
// Python SDKs; printed as one JSON array.
//   node sdk_client.cjs SDKS_DIR openai-chat|openai-responses|anthropic BASE_URL PROMPT...
"use strict";
const path = require("node:path");
const { createRequire } = require("node:module");

const [modules, which, base, ...prompts] = process.argv.slice(2);
const load = createRequire(path.join(modules, "node_modules", "_"));
const KEY = "sk-the-sdk-key";

async function openaiChat(prompt) {
  const messages = [{ role: "user", content: prompt }];
  const OpenAI = load("openai");
  const client = new OpenAI({ baseURL: base + "/v1", apiKey: KEY, maxRetries: 0 });
  const runner = client.chat.completions.stream({
    model: "gpt-test", messages, stream_options: { include_usage: true },
  });
  // reasoning_content is DeepSeek's field, not OpenAI's: the helper keeps only its last
  // fragment in the final message, so it is added up from the chunks.
  let reasoning = "";
  for await (const chunk of runner) {
    for (const c of chunk.choices) reasoning += (c.delta && c.delta.reasoning_content) || "";
  }
  const final = await runner.finalChatCompletion();
  const msg = final.choices[0].message;
  return {
    text: msg.content || "",
    reasoning,
    calls: (msg.tool_calls || []).map((c) => [c.function.name, JSON.parse(c.function.arguments)]),
    stop: final.choices[0].finish_reason,
    output_tokens: final.usage ? final.usage.completion_tokens : null,
  };
}

async function openaiResponses(prompt) {
  const OpenAI = load("openai");
  const client = new OpenAI({ baseURL: base + "/v1", apiKey: KEY, maxRetries: 0 });
  const stream = client.responses.stream({ model: "gpt-test", input: prompt });
  for await (const _ of stream) { /* every event through the SDK's accumulator */ }
  const final = await stream.finalResponse();
  const items = final.output;
  return {
    text: final.output_text,
    reasoning: items.filter((i) => i.type === "reasoning").flatMap((i) => i.summary.map((s) => s.text)).join(""),
    calls: items.filter((i) => i.type === "function_call").map((i) => [i.name, JSON.parse(i.arguments)]),
    stop: final.status,
    output_tokens: final.usage ? final.usage.output_tokens : null,
  };
}

async function anthropic(prompt) {
  const messages = [{ role: "user", content: prompt }];
  const mod = load("@anthropic-ai/sdk");
  const Anthropic = mod.default || mod.Anthropic || mod;
  const client = new Anthropic({ baseURL: base, apiKey: KEY, maxRetries: 0 });
  const stream = client.messages.stream({ model: "claude-test", max_tokens: 1024, messages });
  const final = await stream.finalMessage();
  const blocks = final.content;
  return {
    text: blocks.filter((b) => b.type === "text").map((b) => b.text).join(""),
    reasoning: blocks.filter((b) => b.type === "thinking").map((b) => b.thinking).join(""),
    calls: blocks.filter((b) => b.type === "tool_use").map((b) => [b.name, b.input]),
    stop: final.stop_reason,
    output_tokens: final.usage.output_tokens,
  };
}

const run = { "openai-chat": openaiChat, "openai-responses": openaiResponses, anthropic }[which];
(async () => {
  const out = [];
  for (const prompt of prompts) out.push(await run(prompt));
  return out;
})().then(
  (got) => process.stdout.write(JSON.stringify(got)),
  (err) => { process.stderr.write(String(err && err.stack || err)); process.exit(1); },
);
