-- One load scenario for benchmarks/load.py, configured through environment variables
-- (wrk gives every thread its own Lua state; the top level runs in each of them):
--
--   LOAD_METHOD   GET or POST
--   LOAD_BODY     the request body (may be empty)
--   LOAD_HEADERS  request headers, one "Name: value" a line
--   LOAD_EXPECT   a 2xx response whose body lacks this text counts as "unexpected"
--   LOAD_REJECT   ... and one whose body contains this text (may be empty)
--
-- Counts every response by status in response(): wrk's own "Non-2xx or 3xx responses"
-- counts only statuses above 399, so a redirect to the login page would go unseen.
-- done() prints one line "LOAD_RESULT {json}" with the totals of all threads.

wrk.method = os.getenv("LOAD_METHOD") or "GET"
wrk.body = os.getenv("LOAD_BODY") or ""
if wrk.body == "" then
  wrk.body = nil
end
for line in (os.getenv("LOAD_HEADERS") or ""):gmatch("[^\n]+") do
  local name, value = line:match("^([^:]+):%s*(.*)$")
  if name then
    wrk.headers[name] = value
  end
end

local expect = os.getenv("LOAD_EXPECT") or ""
local reject = os.getenv("LOAD_REJECT") or ""

-- Per-thread counters, read back in done() with thread:get().
responses = 0
non2xx = 0
unexpected = 0
first_bad = ""

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function response(status, headers, body)
  responses = responses + 1
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
    if first_bad == "" then
      first_bad = tostring(status) .. " " .. (body or ""):sub(1, 300)
    end
  elseif (expect ~= "" and not (body or ""):find(expect, 1, true))
      or (reject ~= "" and (body or ""):find(reject, 1, true)) then
    unexpected = unexpected + 1
    if first_bad == "" then
      first_bad = tostring(status) .. " " .. (body or ""):sub(1, 300)
    end
  end
end

local function json_string(s)
  s = s:gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' end
    if c == "\\" then return "\\\\" end
    return string.format("\\u%04x", c:byte())
  end)
  return '"' .. s .. '"'
end

function done(summary, latency, requests)
  local counted, bad_status, bad_body, sample = 0, 0, 0, ""
  for _, thread in ipairs(threads) do
    counted = counted + thread:get("responses")
    bad_status = bad_status + thread:get("non2xx")
    bad_body = bad_body + thread:get("unexpected")
    if sample == "" then
      sample = thread:get("first_bad")
    end
  end
  local e = summary.errors
  io.write(string.format(
    "LOAD_RESULT {\"requests\": %d, \"responses\": %d, \"duration_us\": %d, "
      .. "\"non_2xx\": %d, \"unexpected_body\": %d, \"wrk_status_errors\": %d, "
      .. "\"socket_errors\": {\"connect\": %d, \"read\": %d, \"write\": %d, \"timeout\": %d}, "
      .. "\"latency_us\": {\"mean\": %.1f, \"p50\": %d, \"p90\": %d, \"p99\": %d, \"max\": %d}, "
      .. "\"first_bad\": %s}\n",
    summary.requests, counted, summary.duration, bad_status, bad_body, e.status,
    e.connect, e.read, e.write, e.timeout,
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, json_string(sample)))
end
