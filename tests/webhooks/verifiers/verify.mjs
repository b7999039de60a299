// Verifies webhook requests with the official JavaScript libraries, as a receiver would.
// Input (stdin): {"cases": [{"secret": "whsec_...", "headers": {...}, "body": "..."}]}.
// Output (stdout, one JSON line): for each case, {"standardwebhooks": "ok" | error,
// "svix": "ok" | error}.
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";

function attempt(verify) {
  try {
    verify();
    return "ok";
  } catch (error) {
    return `${error.name}: ${error.message}`;
  }
}

let input = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) input += chunk;
const { cases } = JSON.parse(input);
const results = cases.map(({ secret, headers, body }) => ({
  standardwebhooks: attempt(() => new StandardWebhook(secret).verify(body, headers)),
  svix: attempt(() => new SvixWebhook(secret).verify(body, headers)),
}));
process.stdout.write(JSON.stringify(results) + "\n");
