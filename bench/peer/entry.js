// The peer of pysse's page in `build.py bench`: streamdown rendering the answer as it streams,
// the way its README shows (React, <Streamdown> with the code, math and CJK plugins, the
// text growing by each delta). No JSX: bundled as is by esbuild (bench/bench_peer.py).
//
// It has the hooks the bench reads on pysse's page: body[data-ready='1'] once mounted, a
// [data-role=prompt] textarea where Enter sends, and a [data-role=assistant] element whose
// data-state is "streaming" until the stream has ended; the view follows the answer. The answer comes from the same relay
// (POST /relay, OpenAI chat format) and the same scripted upstream, so the chunks, their size
// and their pace are the ones pysse's page gets.
import { createElement as h, useCallback, useEffect, useRef, useState } from "react";
import { createRoot } from "react-dom/client";
import { Streamdown } from "streamdown";
import { code } from "@streamdown/code";
import { math } from "@streamdown/math";
import { cjk } from "@streamdown/cjk";
import "katex/dist/katex.min.css";
import "streamdown/styles.css";

const plugins = { code, math, cjk };

// Each delta of an OpenAI chat SSE body, in order, as it arrives.
async function* deltas(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
    let cut;
    while ((cut = buffered.indexOf("\n\n")) >= 0) {
      const event = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 2);
      for (const line of event.split("\n")) {
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (data === "[DONE]") return;
        const text = JSON.parse(data).choices?.[0]?.delta?.content;
        if (text) yield text;
      }
    }
  }
}

function Chat() {
  const [messages, setMessages] = useState([]);
  const [streaming, setStreaming] = useState(false);
  // The view follows the answer, as pysse's page does: the scroller is kept at its bottom
  // whenever its content grows, from a ResizeObserver (as use-stick-to-bottom does, without
  // its smooth scrolling): its callback runs after the frame's layout, so reading the height
  // forces none; a scroll in an effect after each change would force one per render.
  const scroller = useRef(null);
  const content = useRef(null);
  useEffect(() => {
    const el = scroller.current;
    const follow = new ResizeObserver(() => {
      el.scrollTop = el.scrollHeight;
    });
    follow.observe(content.current);
    return () => follow.disconnect();
  }, []);

  const send = useCallback(async (prompt) => {
    setMessages((m) => [...m, { role: "user", text: prompt }, { role: "assistant", text: "" }]);
    setStreaming(true);
    try {
      const response = await fetch("/relay", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "bench",
          stream: true,
          messages: [{ role: "user", content: prompt }],
        }),
      });
      for await (const text of deltas(response)) {
        setMessages((m) => {
          const last = m[m.length - 1];
          return [...m.slice(0, -1), { ...last, text: last.text + text }];
        });
      }
    } finally {
      setStreaming(false);
    }
  }, []);

  const onKeyDown = (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      const prompt = e.currentTarget.value;
      e.currentTarget.value = "";
      send(prompt);
    }
  };

  return h(
    "main",
    { className: "mx-auto flex h-screen max-w-3xl flex-col" },
    h(
      "div",
      { ref: scroller, className: "flex-1 overflow-y-auto p-4" },
      h(
        "div",
        { ref: content },
        messages.map((m, i) =>
        m.role === "user"
          ? h("div", { key: i, "data-role": "user", className: "my-4 text-right" }, m.text)
          : h(
              "div",
              {
                key: i,
                "data-role": "assistant",
                "data-state": streaming && i === messages.length - 1 ? "streaming" : "done",
              },
              h(Streamdown, { plugins, isAnimating: streaming && i === messages.length - 1 }, m.text),
            ),
        ),
      ),
    ),
    h("textarea", {
      "data-role": "prompt",
      className: "m-4 rounded border p-2",
      rows: 2,
      onKeyDown,
    }),
  );
}

createRoot(document.getElementById("root")).render(h(Chat));
requestAnimationFrame(() => {
  document.body.dataset.ready = "1";
});
