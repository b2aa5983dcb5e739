-- router.lua: routes every request of the one server block, from the hosts
-- posted to /configuration/routes. It runs in rewrite_by_lua of location /.
--
-- A host item is {name, routes = [route]}; name is an exact host, a
-- one-label wildcard "*.example.com" or "_" (the default server). A host
-- {name, unavailable = true} answers 503: the syncer sends it for a host
-- whose routes were refused, so that none of its old routes (which may lack
-- a newer allow-list) keeps serving. A route:
--
--   path, type      "exact", "prefix" (element-wise, no trailing slash but
--                   for "/") or "regex" (PCRE anchored at the start, case
--                   insensitive, as ingress-nginx's "~*" locations)
--   backend         backend name for balancer.lua; "" answers 404
--   ingress         "namespace/name", for logs and inspection
--   redirect        redirect plain HTTP to HTTPS (308)
--   protocol        "http" (default), "https", "grpc", "grpcs", "auto_http"
--   connectTimeout, sendTimeout, readTimeout   seconds; absent: nginx.conf's
--   bodySize        bytes; absent: the global proxy-body-size; 0: no limit
--   rewrite         rewrite target of a regex route (see rewrite_uri)
--   forwardedPrefix X-Forwarded-Prefix sent with a rewrite
--   allow, deny     CIDRs: clients in deny, or not in allow, get 403 (deny
--                   first, as ingress-nginx); the client is $remote_addr
--                   (nginx.conf's realip settings). A list that cannot be
--                   parsed fails the host (503, fail closed);
--   sourceRangeInvalid  the route answers 503: pkg/model could not apply
--                   its allow- or deny-list annotation (fail closed).
--   preserveTrailingSlash, usePortInRedirects   shape the HTTPS redirect
--   redirectURL, redirectCode   answer with this redirect (300 to 308)
--   cors            CORS policy (see cors.lua)
--   upstreamVhost   the Host header sent to the backend (upstream-vhost)
--   connection      the Connection header sent: "close" or "keep-alive"
--   responseHeaders {name = value} set on its responses (custom-headers)
--   canary          alternative backend chosen per request (see canary.lua)
--   proxy           buffering, HTTP version, tries, Location and Set-Cookie
--                   rewrites, access log (see proxy.lua)
--   errors          error pages and default-backend fallback (see proxy.lua)
--   auth            basic auth: 401 without a user's credentials, 503 when
--                   unavailable; with satisfyAny the source lists move into
--                   it (either admits the request; see auth.lua)
--   limit           rate and connection limits (see limit.lua); one that
--                   does not compile answers 503 (fail closed)
--   extAuth         external auth (auth-url): the auth request's answer
--                   (see extauth.lua); with satisfyAny the source lists
--                   move into it as into auth
--   upstreamTLS     {profile, name}: an https or grpcs backend is proxied
--                   by the profile's fixed locations (nginx.conf's
--                   tls_profiles), proxy-ssl-name name; unavailable, or a
--                   profile this nginx.conf does not hold, answers 503
--   clientAuthUnavailable  the route answers 503: its Ingress's auth-tls
--                   annotations could not be applied (fail closed)
--
-- A host may also have appRoot (requests for "/" get a 302 there),
-- requestHeaders and responseHeaders ({name = value}, see headers.lua: set
-- on every request to a backend and every response; a route's
-- responseHeaders win), redirectTo (every request is redirected to that
-- host: from-to-www) and tls
-- (it has a TLS section: HTTPS answers carry Strict-Transport-Security),
-- and block = {cidrs, userAgents, referers} (block-cidrs,
-- block-user-agents, block-referers: a request from $remote_addr in cidrs,
-- or whose header equals an entry, ignoring case, or matches an entry
-- "~re" or "~*re" (ignoring case), gets 403 before any route), and
-- clientAuth (auth-tls-*: client certificates, see clientauth.lua; checked
-- first on TLS requests, after the HTTPS redirect on plain HTTP ones).
--
-- Lookup: the host by exact name, then the wildcard of its parent, then "_";
-- in the host an Exact route, then regex routes in the order given, then the
-- longest Prefix route by path elements. Its cost depends on the request's
-- host and number of path elements, not on the number of hosts or routes.
-- Nothing else answers: an unmatched request gets 404 (no nginx
-- auto-redirect to a trailing slash).

local configuration = require("configuration")
local store = require("store")
local ipmatch = require("ipmatch")
local headers = require("headers")
local canary = require("canary")
local cors = require("cors")
local proxy_settings = require("proxy")
local auth = require("auth")
local extauth = require("extauth")
local limits = require("limit")
local clientauth = require("clientauth")
local balancer_backends = require("balancer").backends
local metrics = require("metrics")

local ngx = ngx
local ngx_var = ngx.var
local re_match = ngx.re.match
local re_find = ngx.re.find
local str_find = string.find
local str_sub = string.sub
local str_byte = string.byte
local tonumber = tonumber
local tostring = tostring

local _M = {}

local PROTOCOLS = { http = true, https = true, grpc = true, grpcs = true, auto_http = true }
local TYPES = { exact = true, prefix = true, regex = true }
local REGEX_FLAGS = "ijo"

-- optional_string accepts nil or a printable string without spaces.
local function optional_string(v)
  return v == nil or (type(v) == "string" and #v > 0 and not str_find(v, "[%c%s\127]"))
end

local function is_timeout(v)
  return v == nil or (type(v) == "number" and v > 0 and v <= 86400)
end

local TLS_PROTOCOLS = { https = true, grpcs = true, auto_http = true }

-- compile_tls validates a route's upstreamTLS item t and returns the
-- profile name its TLS backend uses; route.tls = {fail} (503) when t is
-- unavailable or names a profile nginx.conf does not hold, {name} for a
-- proxy-ssl-name.
local function compile_tls(route, t)
  if t == nil then
    return nil
  end
  if type(t) ~= "table" or not (t.name == nil or (type(t.name) == "string" and #t.name <= 253
      and t.name:find("^[a-z0-9][a-z0-9.-]*$"))) or not (t.profile == nil or type(t.profile) == "string")
      or not (t.unavailable == nil or type(t.unavailable) == "boolean") then
    return nil, "invalid upstreamTLS"
  end
  local profiles = configuration.settings().tls_profiles or {}
  if t.unavailable == true or (TLS_PROTOCOLS[route.protocol] and not profiles[t.profile]) then
    if t.unavailable ~= true then -- the syncer logs why (unavailable: a Problem on the Ingress)
      ngx.log(ngx.WARN, "route ", route.path, " of ", tostring(route.ingress), " answers 503: its backend TLS profile ",
        tostring(t.profile), " is not in nginx.conf")
    end
    route.tls = { fail = true }
    return nil
  end
  if t.name then
    route.tls = { name = t.name }
  end
  return t.profile
end

-- compile_proxy sets the proxy fields of route from r: exec, the named
-- location (nil: location / itself), or auto, one per scheme (auto_http);
-- timeouts, "connect,send,read[,tries]" for balancer.lua; px, for
-- proxy.apply; stream_body, a body the router must not read.
local function compile_proxy(route, r)
  local p = r.proxy
  local tries
  if p ~= nil then
    local c, err = proxy_settings.compile(p)
    if err then
      return nil, err
    end
    route.px, tries = c, p.nextUpstreamTries
    route.stream_body = p.requestBuffering == "off"
  end
  if r.errors ~= nil then
    local e, err = proxy_settings.compile_errors(r.errors, r.ingress)
    if not e then
      return nil, err
    end
    route.err = e
  end
  local buffering = configuration.settings().proxy_buffering
  local proto = route.protocol
  local tls, terr = compile_tls(route, r.upstreamTLS)
  if terr then
    return nil, terr
  end
  if proto == "auto_http" then
    route.auto = { http = proxy_settings.location_of("http", p, buffering, route.err),
      https = proxy_settings.location_of("https", p, buffering, route.err, tls) }
  else
    route.exec = proxy_settings.location_of(proto, p, buffering, route.err, tls)
  end
  if route.err and route.err.fallback then
    -- The default backend's own answers pass (without interception).
    route.fallback_exec = proxy_settings.location_of("http", p, buffering, { intercept = false })
  end
  route.stream_body = route.stream_body or proto == "grpc" or proto == "grpcs"
  if r.connectTimeout or r.sendTimeout or r.readTimeout or tries then
    route.timeouts = (r.connectTimeout or "") .. "," .. (r.sendTimeout or "") .. "," .. (r.readTimeout or "")
      .. (tries and ("," .. tries) or "")
  end
  return true
end

local CONNECTION = { close = true, ["keep-alive"] = true }

-- is_vhost: a host name or address (letters, digits, inner '-' and '.',
-- no "..") with an optional ":port" (upstream-vhost), as pkg/model checks it.
local function is_vhost(v)
  if type(v) ~= "string" or #v > 260 then
    return false
  end
  local host, port = v:match("^([%w.-]+)(.*)$")
  return host ~= nil and str_find(host, "^%w") ~= nil and str_find(host, "%w$") ~= nil
    and not str_find(host, "..", 1, true) and (port == "" or str_find(port, "^:%d+$") ~= nil)
end

-- compile_upstream sets vhost, connection and the route's own response
-- headers (resp_own; compile merges them with the host's).
local function compile_upstream(route, r)
  local v = r.upstreamVhost
  if v ~= nil and not is_vhost(v) then
    return nil, "invalid upstreamVhost"
  end
  if r.connection ~= nil and not CONNECTION[r.connection] then
    return nil, "connection must be close or keep-alive"
  end
  local own, err = headers.compile(r.responseHeaders, "responseHeaders")
  if err then
    return nil, err
  end
  route.vhost, route.connection, route.resp_own = v, r.connection, own
  return true
end

-- compile_acl sets route.acl = {allow, deny, invalid} when the route has
-- source ranges (one nil check per request for routes without).
local function compile_acl(route, r)
  if r.allow == nil and r.deny == nil and not r.sourceRangeInvalid then
    return true
  end
  local acl = { invalid = r.sourceRangeInvalid == true }
  for _, k in ipairs({ "allow", "deny" }) do
    if r[k] ~= nil then
      local m, err = ipmatch.new(r[k])
      if not m then
        return nil, k .. ": " .. err
      end
      acl[k] = m
    end
  end
  route.acl = acl
  return true
end

-- refuse_source answers 503 for a route whose lists could not be applied,
-- 403 to a client its deny-list names or its allow-list does not; it
-- returns whether it answered.
local function refuse_source(route)
  local acl = route.acl
  if acl.invalid then
    proxy_settings.fail(route.err, 503)
    return true
  end
  local addr = ngx_var.remote_addr
  if (acl.deny and ipmatch.match(acl.deny, addr)) or (acl.allow and not ipmatch.match(acl.allow, addr)) then
    proxy_settings.fail(route.err, 403)
    return true
  end
  return false
end

-- compile_route validates one route and returns the worker's form of it.
local function compile_route(r)
  if type(r) ~= "table" or type(r.path) ~= "string" or #r.path == 0 or str_byte(r.path, 1) ~= 47 then
    return nil, "route needs an absolute path"
  end
  if not TYPES[r.type] then
    return nil, "route " .. r.path .. ": unknown type"
  end
  local proto = r.protocol or "http"
  if not PROTOCOLS[proto] then
    return nil, "route " .. r.path .. ": unknown protocol"
  end
  if not (is_timeout(r.connectTimeout) and is_timeout(r.sendTimeout) and is_timeout(r.readTimeout)) then
    return nil, "route " .. r.path .. ": invalid timeout"
  end
  if r.bodySize ~= nil and (type(r.bodySize) ~= "number" or r.bodySize < 0) then
    return nil, "route " .. r.path .. ": invalid bodySize"
  end
  if r.rewrite ~= nil and (type(r.rewrite) ~= "string" or str_byte(r.rewrite, 1) ~= 47 or r.type ~= "regex") then
    return nil, "route " .. r.path .. ": invalid rewrite (an absolute path, on a regex route)"
  end
  if not (optional_string(r.forwardedPrefix) and optional_string(r.redirectURL)) then
    return nil, "route " .. r.path .. ": invalid forwardedPrefix or redirectURL"
  end
  if r.redirectURL and not (type(r.redirectCode) == "number" and r.redirectCode >= 300 and r.redirectCode <= 308) then
    return nil, "route " .. r.path .. ": redirectCode must be 300 to 308"
  end
  local path = r.path
  if r.type == "prefix" then
    path = path:gsub("(.)/+$", "%1") -- "/foo/" is "/foo"; "/" stays
  end
  local route = {
    path = path, type = r.type, backend = r.backend or "", ingress = r.ingress,
    redirect = r.redirect == true, protocol = proto, body_size = r.bodySize,
    rewrite = r.rewrite, forwarded_prefix = r.forwardedPrefix,
    preserve_slash = r.preserveTrailingSlash == true, port_in_redirect = r.usePortInRedirects == true,
    redirect_url = r.redirectURL, redirect_code = r.redirectCode,
  }
  route.client_closed = r.clientAuthUnavailable == true or nil
  if r.cors ~= nil then
    local c, err = cors.compile(r.cors)
    if not c then
      return nil, "route " .. r.path .. ": " .. err
    end
    route.cors = c
  end
  if r.type == "regex" then
    local _, err = re_match("", r.path, REGEX_FLAGS)
    if err then
      return nil, "route " .. r.path .. ": " .. err
    end
    route.re = "^" .. r.path
  end
  local ok, err = compile_proxy(route, r)
  if not ok then
    return nil, "route " .. r.path .. ": " .. err
  end
  local ok, err = compile_acl(route, r)
  if not ok then
    return nil, "route " .. r.path .. ": " .. err
  end
  if r.auth ~= nil then
    local a, err = auth.compile(r.auth)
    if not a then
      return nil, "route " .. r.path .. ": " .. err
    end
    local acl = route.acl
    if a.satisfy_any and acl and not acl.invalid then -- satisfy any: auth.check reads the lists
      a.acl, route.acl = acl, nil
    end
    route.auth = a
  end
  if r.extAuth ~= nil then
    local ea, err = extauth.compile(r.extAuth, r)
    if not ea then
      return nil, "route " .. r.path .. ": " .. err
    end
    local acl = route.acl or (route.auth and route.auth.acl)
    if ea.satisfy_any and acl and not acl.invalid then -- satisfy any: extauth.check reads the lists
      ea.acl, route.acl = acl, nil
    end
    route.extauth = ea
  end
  if r.canary ~= nil then
    local c, err = canary.compile(r.canary)
    if not c then
      return nil, "route " .. r.path .. ": canary: " .. err
    end
    route.canary = c
  end
  local ok, err = compile_upstream(route, r)
  if not ok then
    return nil, "route " .. r.path .. ": " .. err
  end
  if r.limit ~= nil then
    local l, lerr = limits.compile(r.limit, r.ingress)
    if not l then
      ngx.log(ngx.ERR, "route ", r.path, " of ", tostring(r.ingress), " answers 503: ", lerr)
      l = { invalid = true }
    end
    route.limit = l
  end
  return route
end

-- compile_block_list returns {exact = {value = true}, re = {{re, flags}}}
-- for a list of block entries, or nil and an error.
local function compile_block_list(list)
  if list == nil then
    return nil
  end
  if type(list) ~= "table" then
    return nil, "block lists must be arrays"
  end
  local out = { exact = {}, re = {} }
  for i = 1, #list do
    local e = list[i]
    if type(e) ~= "string" or e == "" then
      return nil, "invalid block entry"
    end
    local pattern, flags = e:match("^~%*(.+)$"), "joi"
    if not pattern then
      pattern, flags = e:match("^~(.+)$"), "jo"
    end
    if pattern then
      local _, err = re_match("", pattern, flags)
      if err then
        return nil, "block entry " .. e .. ": " .. err
      end
      out.re[#out.re + 1] = { pattern, flags }
    else
      out.exact[e:lower()] = true
    end
  end
  return out
end

-- compile_block returns the host's compiled block lists (nil: none).
local function compile_block(b)
  if b == nil then
    return true, nil
  end
  if type(b) ~= "table" then
    return nil, "block must be an object"
  end
  local ua, err = compile_block_list(b.userAgents)
  local ref, rerr = compile_block_list(b.referers)
  if err or rerr then
    return nil, err or rerr
  end
  local cidrs
  if b.cidrs ~= nil then
    local cerr
    cidrs, cerr = ipmatch.new(b.cidrs)
    if not cidrs then
      return nil, "block cidrs: " .. cerr
    end
  end
  if not ua and not ref and not cidrs then
    return true, nil
  end
  return true, { ua = ua, ref = ref, cidrs = cidrs }
end

local function blocked_value(list, v)
  if list == nil or v == nil then
    return false
  end
  if type(v) == "table" then
    v = v[1]
  end
  if list.exact[v:lower()] then
    return true
  end
  local re = list.re
  for i = 1, #re do
    if re_find(v, re[i][1], re[i][2]) then
      return true
    end
  end
  return false
end

-- blocked reports whether the request's client, User-Agent or Referer is
-- blocked.
local function blocked(b)
  return (b.cidrs ~= nil and ipmatch.match(b.cidrs, ngx_var.remote_addr))
    or blocked_value(b.ua, ngx_var.http_user_agent) or blocked_value(b.ref, ngx_var.http_referer)
end

-- compile turns a host item into its lookup tables, or nil and an error.
function _M.compile(item)
  if type(item) ~= "table" or type(item.name) ~= "string" then
    return nil, "host needs a name"
  end
  if item.unavailable then
    return { name = item.name, broken = true }
  end
  if not (optional_string(item.appRoot) and optional_string(item.redirectTo)) then
    return nil, "host " .. item.name .. ": invalid appRoot or redirectTo"
  end
  local h = { name = item.name, exact = {}, prefix = {}, regex = {}, n = 0,
    app_root = item.appRoot, redirect_to = item.redirectTo, tls = item.tls == true }
  local list = item.routes or {}
  if type(list) ~= "table" then
    return nil, "host " .. item.name .. ": routes must be an array"
  end
  local req, err = headers.compile(item.requestHeaders, "requestHeaders")
  local resp, rerr = headers.compile(item.responseHeaders, "responseHeaders")
  if err or rerr then
    return nil, "host " .. item.name .. ": " .. (err or rerr)
  end
  h.resp_headers = headers.response(resp, nil)
  local ok, block = compile_block(item.block)
  if not ok then
    return nil, "host " .. item.name .. ": " .. block
  end
  h.block = block
  local client, cerr = clientauth.compile(item.clientAuth, item.name)
  if cerr then
    return nil, "host " .. item.name .. ": " .. cerr
  end
  h.client = client
  for i = 1, #list do
    local route, err = compile_route(list[i])
    if not route then
      return nil, "host " .. item.name .. ": " .. err
    end
    route.req_headers, route.resp_headers = req, headers.response(resp, route.resp_own)
    route.mkey, route.mkey_canary = metrics.route_keys(item.name, list[i]) -- nil: metrics off
    if route.extauth then -- the auth cache is per host too
      route.extauth.prefix = item.name .. "\0" .. (route.extauth.prefix or "")
    end
    if route.type == "regex" then
      h.regex[#h.regex + 1] = route
    else
      local t = h[route.type]
      if t[route.path] == nil then -- the first of duplicates wins
        t[route.path] = route
      end
    end
    h.n = h.n + 1
  end
  return h
end

-- build is the store's builder. A host that does not compile (the
-- configuration endpoint refuses such hosts, so this means a bug) answers
-- 503 rather than serve an older or partial version of its routes.
local function build(item)
  local h, err = _M.compile(item)
  if h then
    return h
  end
  ngx.log(ngx.ERR, "cannot compile routes: ", err)
  return { name = type(item) == "table" and item.name or "?", broken = true }
end

local hosts = store.new(configuration.ROUTES, build)
_M.hosts = hosts

-- find_host returns the host entry serving name (after hosts:check()).
local function find_host(name)
  local h = name and hosts:lookup(name)
  if h then
    return h
  end
  local dot = name and str_find(name, ".", 1, true)
  if dot and dot > 1 then -- "*.foo.com" needs a label before the dot
    h = hosts:lookup("*" .. str_sub(name, dot))
    if h then
      return h
    end
  end
  return hosts:lookup("_")
end
_M.find_host = find_host

-- match_prefix returns the longest prefix route of uri by path elements.
local function match_prefix(prefix, uri)
  local p = uri
  local n = #p
  while n > 1 and str_byte(p, n) == 47 do
    n = n - 1
  end
  if n < #p then
    p = str_sub(p, 1, n)
  end
  while true do
    local route = prefix[p]
    if route then
      return route
    end
    if p == "/" then
      return nil
    end
    local cut = str_find(p, "/[^/]*$")
    p = cut == 1 and "/" or str_sub(p, 1, cut - 1)
  end
end

-- match returns the route of uri in host h, and the regex captures.
local function match(h, uri)
  local route = h.exact[uri]
  if route then
    return route
  end
  local rx = h.regex
  for i = 1, #rx do
    local m = re_match(uri, rx[i].re, REGEX_FLAGS)
    if m then
      return rx[i], m
    end
  end
  return match_prefix(h.prefix, uri)
end
_M.match = match

-- rewrite_uri applies the route's rewrite target as ingress-nginx's
-- `rewrite "(?i)<path>" <target> break`: the whole path becomes the target,
-- $0 to $9 taking the captures of the route's match m.
local function rewrite_uri(route, m)
  return (route.rewrite:gsub("%$(%d)", function(d)
    return m and m[tonumber(d)] or ""
  end))
end
_M.rewrite_uri = rewrite_uri

-- body_size returns the size of the request body read into memory or a file.
local function body_size()
  local data = ngx.req.get_body_data()
  if data then
    return #data
  end
  local file = ngx.req.get_body_file()
  if not file then
    return 0
  end
  local f = io.open(file, "rb")
  if not f then
    return 0
  end
  local size = f:seek("end")
  f:close()
  return size or 0
end

-- NO_BODY lists the methods whose requests the body check skips when they
-- have no Content-Length (nginx's ceiling still applies to them).
local NO_BODY = { GET = true, HEAD = true, OPTIONS = true, DELETE = true }

-- check_body answers 413 when the body exceeds limit: by Content-Length
-- before anything is read, or, for a body of unknown length (chunked, or
-- HTTP/2 without Content-Length), after reading it. gRPC streams and the
-- bodies of routes without request buffering are left to nginx's ceiling:
-- reading them would end streaming.
local function check_body(route, limit)
  local cl = ngx_var.http_content_length
  if cl then
    local n = tonumber(cl)
    if n and n > limit then
      return proxy_settings.fail(route.err, 413)
    end
    return
  end
  if route.stream_body or NO_BODY[ngx.req.get_method()] then
    return
  end
  if ngx_var.http_transfer_encoding or ngx.req.http_version() == 2 then
    ngx.req.read_body()
    if body_size() > limit then
      return proxy_settings.fail(route.err, 413)
    end
  end
end

local settings

-- REDIRECT_CODES are the codes nginx's `return code URL` sends with a
-- Location; for the other codes of 300 to 308 the URL is the body.
local REDIRECT_CODES = { [301] = true, [302] = true, [303] = true, [307] = true, [308] = true }

-- redirect_host is the request's host for a redirect: $best_http_host
-- (X-Forwarded-Host with use-forwarded-headers) without its port.
local function redirect_host()
  local host = ngx_var.best_http_host or ngx_var.host
  return (host:gsub(":%d+$", ""))
end

-- request_uri_for_redirect is $request_uri without its trailing slash, as
-- ingress-nginx's redirects send it (unless keep_slash).
local function request_uri_for_redirect(keep_slash)
  local uri = ngx_var.request_uri
  if not keep_slash and str_byte(uri, -1) == 47 then
    uri = str_sub(uri, 1, -2)
  end
  return uri
end

-- redirect_to_https sends ingress-nginx's HTTPS redirect (308): no port
-- unless usePortInRedirects, and the request URI's trailing slash dropped
-- unless preserveTrailingSlash.
local function redirect_to_https(route)
  local uri = request_uri_for_redirect(route.preserve_slash)
  local authority = redirect_host()
  if route.port_in_redirect then
    authority = authority .. ":" .. settings.https_port
  end
  return ngx.redirect("https://" .. authority .. uri, settings.redirect_code or 308)
end

-- send_redirect answers with the route's permanent or temporal redirect.
local function send_redirect(route)
  local code = route.redirect_code
  if REDIRECT_CODES[code] then
    return ngx.redirect(route.redirect_url, code)
  end
  ngx.status = code
  ngx.print(route.redirect_url)
  return ngx.exit(code)
end

-- redirect_www answers every request of a from-to-www host: the same URI
-- (without a trailing slash) on host to, with the scheme and port the
-- request came with.
local function redirect_www(to)
  local uri = request_uri_for_redirect(false)
  return ngx.redirect(ngx_var.pass_access_scheme .. "://" .. to .. ":" .. ngx_var.pass_server_port .. uri, settings.redirect_code or 308)
end

-- has_endpoints reports whether backend name has endpoints in this worker.
local function has_endpoints(name)
  local b = balancer_backends:lookup(name)
  return b ~= nil and b.n > 0
end

-- proxy hands the request to its backend: location /'s proxy_pass, or the
-- fixed location of its protocol and proxy settings (see proxy.lua).
local function proxy(route)
  local tls = route.tls
  if tls then
    if tls.fail then
      return proxy_settings.fail(route.err, 503)
    end
    ngx_var.ingress_proxy_ssl_name = tls.name
  end
  local backend = route.canary and canary.choose(route) or route.backend
  ngx_var.proxy_upstream_name = backend
  if route.mkey_canary and backend ~= route.backend then
    ngx_var.ingress_metrics = route.mkey_canary
  end
  if route.timeouts then
    ngx_var.ingress_timeouts = route.timeouts
  end
  if route.px then
    proxy_settings.apply(route.px)
  end
  local err = route.err
  if err then
    ngx_var.ingress_errors = err.info
    if err.fallback and not has_endpoints(backend) and has_endpoints(err.backend) then
      proxy_settings.fallback(err)
      return ngx.exec(route.fallback_exec)
    end
  end
  local loc = route.exec
  if route.auto then
    loc = route.auto[ngx_var.scheme]
  end
  if loc then
    return ngx.exec(loc)
  end
end

-- rewrite runs in rewrite_by_lua: find the route, apply its settings, hand
-- the request to the proxy (or a gRPC location).
-- checked is the store epoch of this worker's last checks.
local checked = -1

-- check brings the route and backend stores up to date for this request:
-- one shared dict read when nothing was written since the last request.
local function check()
  local e = store.epoch()
  if e ~= checked then
    hosts:check()
    balancer_backends:check()
    checked = e
  end
end

-- enter_host applies what the host decides for every request: a broken
-- host, client certificates over TLS, the block lists, response headers,
-- HSTS, from-to-www and app-root. It returns true when it answered the
-- request, and the client certificate check left for the route (plain
-- HTTP, after its HTTPS redirect).
local function enter_host(h, uri)
  if h.broken then
    return true, ngx.exit(503)
  end
  local client = h.client
  if client and ngx_var.https == "on" then
    clientauth.check(client, true)
    client = nil
  end
  if h.block and blocked(h.block) then
    return true, ngx.exit(403)
  end
  if h.resp_headers then
    headers.mark(h.resp_headers)
  end
  if h.tls then
    ngx_var.ingress_tls_host = "1" -- for Strict-Transport-Security
  end
  if h.redirect_to then
    return true, redirect_www(h.redirect_to)
  end
  if h.app_root and uri == "/" then
    return true, ngx.redirect(ngx_var.scheme .. "://" .. (ngx_var.http_host or ngx_var.host) .. h.app_root, 302)
  end
  return false, client
end

-- check_access runs the route's source lists, limits and auth (in
-- ingress-nginx's order); it returns true when it answered the request.
local function check_access(route)
  if route.acl and refuse_source(route) then
    return true
  end
  local code
  if route.limit then
    code = limits.check(route.limit)
  end
  if not code and route.auth then
    code = auth.check(route.auth)
  end
  if not code and route.extauth then
    code = extauth.check(route.extauth)
  end
  if code then
    return true, proxy_settings.fail(route.err, code)
  end
  return false
end

-- to_upstream applies the route's rewrite and what it sends upstream.
local function to_upstream(route, m)
  if route.rewrite then
    ngx.req.set_uri(rewrite_uri(route, m))
    if route.forwarded_prefix then
      ngx.req.set_header("X-Forwarded-Prefix", route.forwarded_prefix)
    end
  end
  if route.req_headers then
    headers.apply_request(route.req_headers)
  end
  if route.vhost then
    ngx_var.ingress_upstream_vhost = route.vhost
  end
  if route.connection then
    ngx_var.ingress_connection = route.connection
  end
end

function _M.rewrite()
  check()
  local h = find_host(ngx_var.host)
  if not h then
    return ngx.exit(404)
  end
  local uri = ngx_var.uri
  local answered, client = enter_host(h, uri)
  if answered then
    return
  end
  local route, m = match(h, uri)
  if route and route.mkey then
    ngx_var.ingress_metrics = route.mkey -- lua/metrics.lua counts it in the log phase
  end
  if route and route.resp_headers then
    headers.mark(route.resp_headers)
  end
  if not route or route.backend == "" then
    return proxy_settings.fail(route and route.err, 404) -- the built-in default backend's 404
  end
  if route.client_closed then
    return ngx.exit(503)
  end
  local limit = route.body_size or settings.body_size
  if limit and limit > 0 then
    check_body(route, limit)
  end
  if route.cors then
    cors.apply(route.cors)
  end
  if route.redirect_url then
    return send_redirect(route)
  end
  if route.redirect and ngx_var.pass_access_scheme == "http" then
    return redirect_to_https(route)
  end
  if client then
    clientauth.check(client, false)
  end
  if check_access(route) then
    return
  end
  to_upstream(route, m)
  return proxy(route)
end

function _M.init_worker()
  settings = configuration.settings()
  hosts:start(1)
end

return _M
