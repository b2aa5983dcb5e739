-- mirror.lua: request mirrors (ingress-nginx's mirror-* annotations,
-- Gateway API RequestMirror filters). A route's mirrors is an array of at
-- most MAX_MIRRORS items
--   { backend | url, host, body, numerator, denominator }
-- backend: a backend name of balancer.lua (the copy goes to one of its
-- endpoints at random); url: "http(s)://host[:port]" and a template of the
-- path and query (extauth.lua's templates: literal text and its VARIABLES),
-- "" sending the request's own URI; host: the copy's Host header (nil: the
-- url's host, or the request's for a backend); body: the request body is
-- sent with the copy; numerator of every denominator requests are copied,
-- at random.
--
-- How a copy is sent: router.lua calls send once the route's access
-- checks passed and its request filters ran, before proxying. send decides
-- per mirror whether this request is copied, takes what the copy needs
-- from the request (method, URI, headers, body when asked) and hands it to
-- a zero-delay ngx.timer, whose cosocket connects, writes the request,
-- reads the status line and closes. The request itself never waits for a
-- copy and never sees its answer or failure. Bounds, per worker: at most
-- MAX_PENDING copies in flight (beyond it a copy is dropped, not queued),
-- bodies up to MAX_BODY (a larger one drops the copy), and each copy's
-- connect, send and read timeouts. A host name in a url is resolved by
-- nginx.conf's resolver, as an auth URL's. Counters, in the metrics dict:
-- "#Ms" copies answered, "#Md" dropped (in-flight bound, body too large,
-- no endpoint), "#Mf" failed (connect, TLS, timeout, resolver).

local settings = require("settings")
local nvar = require("nvar")
local extauth = require("extauth")
local filters = require("filters")
local balancer_backends = require("balancer").backends

local ngx = ngx
local var_get = nvar.get
local random = math.random
local concat = table.concat
local str_find = string.find
local str_gsub = string.gsub
local str_format = string.format
local str_byte = string.byte
local str_lower = string.lower
local type = type
local pairs = pairs
local tonumber = tonumber

local _M = {}

local MAX_MIRRORS = 8
local MAX_DENOMINATOR = 1000000
-- MAX_PENDING stays below nginx's lua_max_running_timers (256).
local MAX_PENDING = 64
local MAX_BODY = 1048576
local CONNECT_MS, SEND_MS, READ_MS = 2000, 5000, 5000
local MAX_HEADERS = 100

-- SKIP are the request headers a copy does not carry (hop-by-hop, and
-- those it sets itself).
local SKIP = { host = true, connection = true, ["keep-alive"] = true, ["proxy-connection"] = true,
  te = true, trailer = true, ["transfer-encoding"] = true, upgrade = true, ["content-length"] = true,
  expect = true, ["x-forwarded-for"] = true, ["x-real-ip"] = true, ["x-forwarded-proto"] = true,
  ["x-forwarded-host"] = true }

local DEFAULT_PORT = { http = 80, https = 443 }

-- pending counts this worker's copies in flight.
local pending = 0

local dict = ngx.shared[settings.METRICS]

local function count(key)
  if dict then
    dict:incr(key, 1, 0)
  end
end

-- is_host: a host name or address with an optional ":port".
local function is_host(v)
  if type(v) ~= "string" or #v > 260 then
    return false
  end
  local name, port = v:match("^(%w[%w.-]*)(.*)$")
  return name ~= nil and not str_find(name, "..", 1, true) and (port == "" or str_find(port, "^:%d+$") ~= nil)
end

-- compile_url splits url into scheme, host, port and the compiled
-- template of its path and query (nil: the request's URI).
local function compile_url(m, url)
  if type(url) ~= "string" or #url > 4096 then
    return nil, "invalid mirror url"
  end
  local scheme, authority, rest = url:match("^(https?)://([^/?$]+)(.*)$")
  if not scheme then
    return nil, "mirror url must be http:// or https://"
  end
  local host, port = authority:match("^([%w.-]+):(%d+)$")
  if not host then
    host, port = authority, DEFAULT_PORT[scheme]
  end
  port = tonumber(port)
  if not is_host(host) or not port or port < 1 or port > 65535 then
    return nil, "mirror url has an invalid host or port"
  end
  if rest ~= "" then
    local parts, err = extauth.compile_template(rest, "mirror url")
    if not parts then
      return nil, err
    end
    m.parts = parts
  end
  m.scheme, m.addr, m.port, m.tls = scheme, host, port, scheme == "https"
  m.default_host = port == DEFAULT_PORT[scheme] and host or (host .. ":" .. port)
  return true
end

-- compile_one validates one mirror item.
local function compile_one(item)
  if type(item) ~= "table" then
    return nil, "mirror must be an object"
  end
  local num, den = item.numerator, item.denominator
  if type(den) ~= "number" or den < 1 or den > MAX_DENOMINATOR or den % 1 ~= 0
      or type(num) ~= "number" or num < 0 or num > den or num % 1 ~= 0 then
    return nil, "mirror needs 0 <= numerator <= denominator <= " .. MAX_DENOMINATOR
  end
  if item.host ~= nil and not is_host(item.host) then
    return nil, "invalid mirror host"
  end
  local m = { num = num, den = den, body = item.body == true, host = item.host }
  if (item.backend == nil) == (item.url == nil) then
    return nil, "mirror needs one of backend and url"
  end
  if item.backend ~= nil then
    if type(item.backend) ~= "string" or item.backend == "" or #item.backend > 512 then
      return nil, "invalid mirror backend"
    end
    m.backend = item.backend
    return m
  end
  local ok, err = compile_url(m, item.url)
  if not ok then
    return nil, err
  end
  return m
end

-- compile validates a route's mirrors and returns their compiled list
-- (nil for none), or nil and an error.
function _M.compile(list)
  if list == nil then
    return nil
  end
  if type(list) ~= "table" or #list > MAX_MIRRORS then
    return nil, "mirrors must be an array of at most " .. MAX_MIRRORS
  end
  local out = {}
  for i = 1, #list do
    local m, err = compile_one(list[i])
    if not m then
      return nil, err
    end
    out[i] = m
  end
  if #out == 0 then
    return nil
  end
  return out
end

local function pct(c)
  return str_format("%%%02X", str_byte(c))
end

-- request_uri is the URI the backend gets: the request's, or, after a
-- rewrite (rewritten), the new path and the query.
local function request_uri(rewritten)
  if not rewritten then
    local uri = var_get("request_uri")
    if str_find(uri, "[%s%c\128-\255]") then
      uri = str_gsub(uri, "[%s%c\128-\255]", pct)
    end
    return uri
  end
  local path = filters.escape_path(var_get("uri"))
  local args = var_get("args")
  if args and args ~= "" then
    return path .. "?" .. args
  end
  return path
end

-- header_lines returns the request's headers as the copy sends them.
local function header_lines()
  local out, n = {}, 0
  local hs = ngx.req.get_headers(MAX_HEADERS, true)
  for name, v in pairs(hs) do
    if not SKIP[str_lower(name)] then
      if type(v) == "table" then
        for i = 1, #v do
          out[n + 1], out[n + 2], out[n + 3], out[n + 4] = name, ": ", v[i], "\r\n"
          n = n + 4
        end
      else
        out[n + 1], out[n + 2], out[n + 3], out[n + 4] = name, ": ", v, "\r\n"
        n = n + 4
      end
    end
  end
  out[n + 1] = "X-Forwarded-For: " .. (var_get("forwarded_for") or var_get("remote_addr")) .. "\r\n"
  out[n + 2] = "X-Real-IP: " .. var_get("remote_addr") .. "\r\n"
  out[n + 3] = "X-Forwarded-Proto: " .. (var_get("pass_access_scheme") or var_get("scheme")) .. "\r\n"
  out[n + 4] = "X-Forwarded-Host: " .. (var_get("best_http_host") or var_get("host")) .. "\r\n"
  return concat(out)
end

-- request_body returns the request body (read now), "" for none, nil
-- when it is over MAX_BODY.
local function request_body()
  ngx.req.read_body()
  local data = ngx.req.get_body_data()
  if data then
    return data
  end
  local file = ngx.req.get_body_file()
  if not file then
    return ""
  end
  local f = io.open(file, "rb")
  if not f then
    return nil
  end
  local size = f:seek("end")
  if not size or size > MAX_BODY then
    f:close()
    return nil
  end
  f:seek("set")
  data = f:read("*a")
  f:close()
  return data
end

-- deliver sends one copy and returns true or nil and an error.
local function deliver(job)
  local sock = ngx.socket.tcp()
  sock:settimeouts(CONNECT_MS, SEND_MS, READ_MS)
  local ok, err = sock:connect(job.addr, job.port)
  if ok and job.tls then
    ok, err = sock:sslhandshake(nil, job.sni, false)
  end
  if ok then
    ok, err = sock:send(job.data)
  end
  if ok then
    ok, err = sock:receive("*l")
  end
  sock:close()
  return ok, err
end

-- run sends one copy (a timer's handler) and counts how it went.
local function run(premature, job)
  if premature then
    pending = pending - 1
    return
  end
  local done, ok, err = pcall(deliver, job)
  pending = pending - 1
  if done and ok then
    count("#Ms")
  else
    count("#Mf")
    ngx.log(ngx.INFO, "mirror request to ", job.addr, ":", job.port, " failed: ", done and err or ok)
  end
end

-- target sets the address, port and TLS of job for mirror m; false when
-- a backend has no endpoint.
local function target(job, m)
  if not m.backend then
    job.addr, job.port, job.tls, job.sni = m.addr, m.port, m.tls, m.addr
    return true
  end
  local b = balancer_backends:lookup(m.backend)
  if not b or b.n == 0 then
    return false
  end
  local ep = b.endpoints[random(b.n)]
  job.addr, job.port, job.tls = ep.host, ep.port, false -- host: an IPv6 address in brackets
  return true
end

-- copy returns the request text of a copy for mirror m; req caches what
-- every mirror of the request shares.
local function copy(m, req, rewritten)
  if not req.head then
    req.method, req.uri, req.head = ngx.req.get_method(), request_uri(rewritten), header_lines()
  end
  local body = ""
  if m.body and not req.stream_body then
    if req.body == nil then
      req.body = request_body() or false
    end
    if req.body == false then
      return nil
    end
    body = req.body
  end
  local uri = m.parts and extauth.expand(m.parts, true) or req.uri
  local host = m.host or m.default_host or var_get("http_host") or var_get("host")
  local length = ""
  if #body > 0 or m.body and var_get("http_content_length") then
    length = "Content-Length: " .. #body .. "\r\n"
  end
  return concat({ req.method, " ", uri, " HTTP/1.1\r\nHost: ", host, "\r\n", req.head, length,
    "Connection: close\r\n\r\n", body })
end

-- start hands a copy for mirror m to a timer, or counts it dropped.
local function start(m, req, rewritten)
  local job = {}
  if pending >= MAX_PENDING or not target(job, m) then
    return count("#Md")
  end
  job.data = copy(m, req, rewritten)
  if not job.data then
    return count("#Md") -- its body is over MAX_BODY
  end
  pending = pending + 1
  local ok, err = ngx.timer.at(0, run, job)
  if not ok then
    pending = pending - 1
    count("#Md")
    ngx.log(ngx.WARN, "cannot start a mirror request: ", err)
  end
end

-- send copies the request to the route's mirrors that take it (see the
-- header); stream_body: the route streams the request body (gRPC, request
-- buffering off), which a copy then does not carry; rewritten: the route
-- changed the path.
function _M.send(mirrors, stream_body, rewritten)
  local req = { stream_body = stream_body }
  for i = 1, #mirrors do
    local m = mirrors[i]
    if m.num == m.den or (m.num > 0 and random(m.den) <= m.num) then
      start(m, req, rewritten)
    end
  end
end

return _M
