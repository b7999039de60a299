// Loads GraphiQL pages in jsdom with a fake network and reports what a visitor would
// see after WAIT_MS. Input (stdin): {"name": "<html>", ...}. Output: one JSON line,
// {"name": {uiHidden, uiText, noticeHidden, reason}, ...}.
//
// The network, by URL: unpkg.com and "/offline/" fail at once, "/stall/" never answers,
// "/late/" answers after LATE_MS (past the page's 10 s timeout), anything else answers
// at once with a stand-in for the file its name ends with.
const { JSDOM, ResourceLoader, VirtualConsole } = require("jsdom");

const WAIT_MS = 12000;
const LATE_MS = 11000;

const STAND_INS = {
  "react.production.min.js": "window.React = { createElement: () => ({}) };",
  "react-dom.production.min.js":
    "window.ReactDOM = { createRoot: (el) => ({ render: () => { el.textContent = 'GraphiQL rendered'; } }) };",
  "graphiql.min.js": "window.GraphiQL = function GraphiQL() {};",
  "graphiql.min.css": "body { margin: 0; }",
};

class FakeNetwork extends ResourceLoader {
  fetch(url) {
    const body = Buffer.from(STAND_INS[url.split("/").pop()] ?? "");
    if (url.startsWith("https://unpkg.com/") || url.includes("/offline/")) {
      return Promise.reject(new Error("network unreachable"));
    }
    if (url.includes("/stall/")) return new Promise(() => {});
    if (url.includes("/late/")) return new Promise((resolve) => setTimeout(() => resolve(body), LATE_MS));
    return Promise.resolve(body);
  }
}

function load(html) {
  const dom = new JSDOM(html, {
    url: "http://testserver/graphql",
    runScripts: "dangerously",
    resources: new FakeNetwork(),
    virtualConsole: new VirtualConsole(), // the failed loads are the point: keep quiet
  });
  return () => {
    const doc = dom.window.document;
    const ui = doc.getElementById("graphiql");
    const notice = doc.getElementById("graphiql-unavailable");
    return {
      uiHidden: ui.hidden,
      uiText: ui.textContent,
      noticeHidden: notice.hidden,
      reason: doc.getElementById("graphiql-unavailable-reason").textContent,
    };
  };
}

let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const pages = Object.entries(JSON.parse(input)).map(([name, html]) => [name, load(html)]);
  setTimeout(() => {
    const seen = Object.fromEntries(pages.map(([name, look]) => [name, look()]));
    console.log(JSON.stringify(seen));
    process.exit(0);
  }, WAIT_MS);
});
