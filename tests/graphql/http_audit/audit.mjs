// Runs the official GraphQL-over-HTTP audit suite (graphql-http) against a URL and
// prints one JSON line: [{id, name, status, reason}] for every audit.
import { auditServer } from 'graphql-http';

const results = await auditServer({ url: process.argv[2] });
console.log(JSON.stringify(results.map((r) => ({ id: r.id, name: r.name, status: r.status, reason: r.reason ?? null }))));
