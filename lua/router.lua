-- router.lua: routes every request of the one server block, from the hosts
-- posted to /configuration/routes (compiled by routes.lua, which documents
-- a host item). It runs in rewrite_by_lua of location / (phases.lua's
-- rewrite).
--
-- Lookup: in the table of the request's port (nginx's own ports: the hosts
-- of Ingresses, named as they are; the port of a Gateway listener, from
-- settings.gateway_ports: the hosts named "<port>:<host>", config.ServerKey),
-- the host by exact name, then the wildcard of its parent, then "_";
-- in the host an Exact route, then regex routes in the order given, then the
-- longest Prefix route by path elements. A path may have several candidate
-- routes with match conditions (route.cond, see routes.lua): the first
-- whose conditions the request meets takes it; when none does, the lookup
-- goes on (to regex routes, then shorter prefixes). Its cost depends on
-- the request's host, number of path elements and the candidates of its
-- paths, not on the number of hosts or routes.
-- Nothing else answers: an unmatched request gets 404 (no nginx
-- auto-redirect to a trailing slash).
--
-- On a Gateway port with several listeners (host.listeners, see
-- routes.lua) a request belongs to the listener its Host header selects
-- (the most specific listener hostname it matches): a host found for it
-- that serves another listener (a wildcard of a less specific listener)
-- does not serve it (404), and over TLS a request whose SNI name selects
-- another listener than its Host header is misdirected (421).

local settings = require("settings")
local store = require("store")
local ipmatch = require("ipmatch")
local headers = require("headers")
local canary = require("canary")
local cors = require("cors")
local proxy_settings = require("proxy")
local modsecurity = require("modsecurity")
local auth = require("auth")
local extauth = require("extauth")
local limits = require("limit")
local clientauth = require("clientauth")
local filters = require("filters")
local mirror = require("mirror")
local balancer_backends = require("balancer").backends
local routes = require("routes")
local start_span = require("tracing").start

local ngx = ngx
local nvar = require("nvar")
local var_get, var_set = nvar.get, nvar.set
local re_match = ngx.re.match
local re_find = ngx.re.find
local str_find = string.find
local str_sub = string.sub
local str_byte = string.byte
local str_lower = string.lower
local tonumber = tonumber

local _M = {}

local REGEX_FLAGS = "ijo"

-- refuse_source answers 503 for a route whose lists could not be applied,
-- 403 to a client its deny-list names or its allow-list does not; it
-- returns whether it answered.
local function refuse_source(route)
  local acl = route.acl
  if acl.invalid then
    proxy_settings.fail(route.err, 503)
    return true
  end
  local addr = var_get("remote_addr")
  if (acl.deny and ipmatch.match(acl.deny, addr)) or (acl.allow and not ipmatch.match(acl.allow, addr)) then
    proxy_settings.fail(route.err, 403)
    return true
  end
  return false
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
  return (b.cidrs ~= nil and ipmatch.match(b.cidrs, var_get("remote_addr")))
    or blocked_value(b.ua, var_get("http_user_agent")) or blocked_value(b.ref, var_get("http_referer"))
end

-- build is the store's builder. A host that does not compile (the
-- configuration endpoint refuses such hosts, so this means a bug) answers
-- 503 rather than serve an older or partial version of its routes.
local function build(item)
  local h, err = routes.compile(item)
  if h then
    return h
  end
  ngx.log(ngx.ERR, "cannot compile routes: ", err)
  return { name = type(item) == "table" and item.name or "?", broken = true }
end

local hosts = store.new(settings.ROUTES, build)
_M.hosts = hosts

-- gateway_prefixes maps the port of a Gateway listener, as a string
-- (ngx.var.server_port) and as a number (ngx.ssl.server_port), to the prefix
-- of the names of its hosts ("10080:"); nil until init_worker, false when
-- there is none (then the server port is not read).
local gateway_prefixes = false

-- find_gateway_host returns the host entry serving name on the Gateway
-- listener port whose names start with prefix: exact, then the wildcards
-- of its parents from the longest ("*.example.com" matches any number of
-- labels before ".example.com", as Gateway API's hostnames do), then "_"
-- of that port only, never a host of another port.
local function find_gateway_host(prefix, name)
  local h = name and hosts:lookup(prefix .. name)
  if h then
    return h
  end
  local dot = name and str_find(name, ".", 2, true)
  while dot do -- at most one lookup per label
    h = hosts:lookup(prefix .. "*" .. str_sub(name, dot))
    if h then
      return h
    end
    dot = str_find(name, ".", dot + 1, true)
  end
  local v = hosts:lookup(prefix .. "_")
  return v
end

-- find_host returns the host entry serving name (after hosts:check()) on
-- port (the request's server port; nil reads nginx's own ports' table).
local function find_host(name, port)
  local prefix = port and gateway_prefixes and gateway_prefixes[port]
  if prefix then
    local v = find_gateway_host(prefix, name)
    return v
  end
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

local listener_of = routes.listener_of

-- misdirected reports whether a request for name over TLS on the Gateway
-- port whose hosts are named with prefix, found host h (nil: none), came
-- on a connection whose SNI name selects another listener of the port.
-- The listeners are those of h, else of the host of the SNI name.
local function misdirected(prefix, h, name)
  local sni = var_get("ssl_server_name")
  if not sni or sni == "" or not name then
    return false
  end
  sni = str_lower(sni)
  if str_byte(sni, -1) == 46 then -- as nginx's server name: no trailing dot
    sni = str_sub(sni, 1, -2)
  end
  if sni == name then
    return false
  end
  local set = h and h.listeners
  if not set then
    local s = find_gateway_host(prefix, sni)
    set = s and s.listeners
    if not set then
      return false
    end
  end
  return listener_of(set, sni) ~= listener_of(set, name)
end

-- gateway_host returns the host serving name on Gateway port prefix, nil
-- when none (404), and whether the request is misdirected (421): see the
-- top of this file.
local function gateway_host(prefix, name)
  local h = find_gateway_host(prefix, name)
  if (h == nil or h.listeners) and misdirected(prefix, h, name) then
    return nil, true
  end
  if h and h.listeners and name and h.listener ~= listener_of(h.listeners, name) then
    return nil, false
  end
  return h, false
end

-- request_host returns the host entry serving a request for name on
-- port (find_host), with listener isolation on a Gateway port: nil for
-- none, and whether the request is misdirected (421).
local function request_host(name, port)
  local prefix = port and gateway_prefixes and gateway_prefixes[port]
  if prefix then
    local h, mis = gateway_host(prefix, name)
    return h, mis
  end
  local h = find_host(name, port)
  return h, false
end

-- value_meets reports whether v, a request's header or query value (a
-- table: its values, the first counts), meets condition c.
local function value_meets(c, v)
  if type(v) == "table" then
    v = v[1]
  end
  if type(v) ~= "string" then
    return false
  end
  if c.re then
    return re_find(v, c.re, "jo") ~= nil
  end
  return v == c.value
end

-- headers_meet reports whether the request's headers meet every
-- condition of hs (not empty). The first round is taken before the loop
-- (see nvar.lua on loops), as for query_meets.
local function headers_meet(hs)
  local c = hs[1]
  if not value_meets(c, var_get(c.var)) then
    return false
  end
  for i = 2, #hs do
    c = hs[i]
    if not value_meets(c, var_get(c.var)) then
      return false
    end
  end
  return true
end

-- query_meets reports whether the request's query parameters meet every
-- condition of qs (not empty).
local function query_meets(qs)
  local args = ngx.req.get_uri_args(100)
  if not value_meets(qs[1], args[qs[1].name]) then
    return false
  end
  for i = 2, #qs do
    if not value_meets(qs[i], args[qs[i].name]) then
      return false
    end
  end
  return true
end

-- meets reports whether the request meets the match conditions cond:
-- the method, every header (first value) and every query parameter.
local function meets(cond)
  if cond.method and cond.method ~= var_get("request_method") then
    return false
  end
  local hs, qs = cond.headers, cond.query
  if hs and not headers_meet(hs) then
    return false
  end
  if qs and not query_meets(qs) then
    return false
  end
  return true
end

-- candidate returns the first of the candidates starting at route (whose
-- cond is set) that the request meets, or nil; the first is tried before
-- the loop.
local function candidate(route)
  if meets(route.cond) then
    return route
  end
  route = route.next
  while route do
    local cond = route.cond
    if not cond or meets(cond) then
      return route
    end
    route = route.next
  end
  return nil
end
_M.candidate = candidate

-- server_port returns the request's server port when a Gateway listener
-- may have received it, nil otherwise (no variable is read then).
local function server_port()
  if gateway_prefixes then
    local v = var_get("server_port")
    return v
  end
  return nil
end

-- gateway_prefix returns the prefix of the names of the hosts and
-- certificate hosts of Gateway listener port port (a number or a string),
-- nil for nginx's own ports.
function _M.gateway_prefix(port)
  return port and gateway_prefixes and gateway_prefixes[port] or nil
end

-- has_gateway_ports reports whether nginx listens on Gateway listener ports.
function _M.has_gateway_ports()
  return gateway_prefixes ~= false
end

-- parent_prefix returns the longest prefix route of p's parent paths by
-- path elements (p: a path without trailing slash, itself not a route).
local function parent_prefix(prefix, p)
  while p ~= "/" do
    local cut = str_find(p, "/[^/]*$")
    p = cut == 1 and "/" or str_sub(p, 1, cut - 1)
    local route = prefix[p]
    if route and route.cond then
      route = candidate(route)
    end
    if route then
      return route
    end
  end
  return nil
end

-- without_trailing_slashes returns p without its trailing slashes ("/"
-- stays).
local function without_trailing_slashes(p)
  local n = #p
  while n > 1 and str_byte(p, n) == 47 do
    n = n - 1
  end
  return str_sub(p, 1, n)
end

-- match_prefix returns the longest prefix route of uri by path elements.
-- The path itself is looked up before any loop (see nvar.lua on loops).
local function match_prefix(prefix, uri)
  local p = uri
  local n = #p
  if n > 1 and str_byte(p, n) == 47 then
    p = without_trailing_slashes(p)
  end
  local route = prefix[p]
  if route and route.cond then
    route = candidate(route)
  end
  if route then
    return route
  end
  return parent_prefix(prefix, p)
end

-- match returns the route of uri in host h, and the regex captures.
local function match(h, uri)
  local route = h.exact[uri]
  if route and route.cond then
    route = candidate(route)
  end
  if route then
    return route
  end
  local rx = h.regex
  for i = 1, #rx do
    local m = re_match(uri, rx[i].re, REGEX_FLAGS)
    if m and (not rx[i].cond or meets(rx[i].cond)) then
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
  local cl = var_get("http_content_length")
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
  if var_get("http_transfer_encoding") or ngx.req.http_version() == 2 then
    ngx.req.read_body()
    if body_size() > limit then
      return proxy_settings.fail(route.err, 413)
    end
  end
end

-- conf holds the settings of nginx.conf (settings.lua), from init_worker.
local conf

-- REDIRECT_CODES are the codes nginx's `return code URL` sends with a
-- Location; for the other codes of 300 to 308 the URL is the body.
local REDIRECT_CODES = { [301] = true, [302] = true, [303] = true, [307] = true, [308] = true }

-- redirect_host is the request's host for a redirect: $best_http_host
-- (X-Forwarded-Host with use-forwarded-headers) without its port.
local function redirect_host()
  local host = var_get("best_http_host") or var_get("host")
  return (host:gsub(":%d+$", ""))
end

-- request_uri_for_redirect is $request_uri without its trailing slash, as
-- ingress-nginx's redirects send it (unless keep_slash).
local function request_uri_for_redirect(keep_slash)
  local uri = var_get("request_uri")
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
    authority = authority .. ":" .. conf.https_port
  end
  return ngx.redirect("https://" .. authority .. uri, conf.redirect_code or 308)
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

-- WELL_KNOWN are the ports a redirect's Location leaves out.
local WELL_KNOWN = { http = 80, https = 443 }

-- gateway_redirect answers with the route's Gateway API redirect: the
-- request's scheme, host (without port) and URI unless the redirect
-- replaces them; the port only when given and not the scheme's
-- well-known one; the query string kept.
local function gateway_redirect(route, uri)
  local rd = route.gw_redirect
  local scheme = rd.scheme or var_get("pass_access_scheme")
  local authority = rd.hostname or redirect_host()
  if rd.port and rd.port ~= WELL_KNOWN[scheme] then
    authority = authority .. ":" .. rd.port
  end
  local path
  if rd.path then
    path = filters.escape_path(filters.modify(rd.path, route.path, uri))
    local args = var_get("args")
    if args and args ~= "" then
      path = path .. "?" .. args
    end
  else
    path = var_get("request_uri")
  end
  return ngx.redirect(scheme .. "://" .. authority .. path, rd.code)
end

-- redirect_www answers every request of a from-to-www host: the same URI
-- (without a trailing slash) on host to, with the scheme and port the
-- request came with.
local function redirect_www(to)
  local uri = request_uri_for_redirect(false)
  return ngx.redirect(var_get("pass_access_scheme") .. "://" .. to .. ":" .. var_get("pass_server_port") .. uri, conf.redirect_code or 308)
end

-- has_endpoints reports whether backend name has endpoints in this worker.
local function has_endpoints(name)
  local b = balancer_backends:lookup(name)
  return b ~= nil and b.n > 0
end

local random = math.random

-- pick_weighted returns one of the backends of w at random by weight,
-- and its index (the first is tried before the loop).
local function pick_weighted(w)
  local n = random(w.total)
  local cum = w.cum
  if n <= cum[1] then
    return w.names[1], 1
  end
  for i = 2, #cum do
    if n <= cum[i] then
      return w.names[i], i
    end
  end
  return w.names[#cum], #cum
end

-- proxy hands the request to its backend: location /'s proxy_pass, or the
-- fixed location of its protocol and proxy settings (see proxy.lua).
local function proxy(route)
  local ms = route.modsec
  if ms and ms.fail then
    return proxy_settings.fail(route.err, 503)
  end
  local tls = route.tls
  if tls then
    if tls.fail then
      return proxy_settings.fail(route.err, 503)
    end
    var_set("ingress_proxy_ssl_name", tls.name)
  end
  local backend = route.canary and canary.choose(route) or route.backend
  local w = route.weighted
  if w then
    local i
    backend, i = pick_weighted(w)
    if backend == "" then -- a backendRef that cannot be served
      return proxy_settings.fail(route.err, 500)
    end
    local f = w.filters and w.filters[i]
    if f then -- the backendRef's own filter, after the route's
      filters.apply_request(f)
    end
  end
  var_set("proxy_upstream_name", backend)
  if route.mkey_canary and backend ~= route.backend then
    var_set("ingress_metrics", route.mkey_canary)
  end
  if route.timeouts then
    var_set("ingress_timeouts", route.timeouts)
  end
  if route.px then
    proxy_settings.apply(route.px)
  end
  local err = route.err
  if err then
    var_set("ingress_errors", err.info)
    if err.fallback and not has_endpoints(backend) and has_endpoints(err.backend) then
      proxy_settings.fallback(err)
      if ms then
        local v = modsecurity.enter(ms, route.fallback_exec)
        return v
      end
      return ngx.exec(route.fallback_exec)
    end
  end
  local loc = route.exec
  if route.auto then
    loc = route.auto[var_get("scheme")]
  end
  if ms then
    local v = modsecurity.enter(ms, loc)
    return v
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
  if client and var_get("https") == "on" then
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
    var_set("ingress_tls_host", "1") -- for Strict-Transport-Security
  end
  if h.redirect_to then
    return true, redirect_www(h.redirect_to)
  end
  if h.app_root and uri == "/" then
    return true, ngx.redirect(var_get("scheme") .. "://" .. (var_get("http_host") or var_get("host")) .. h.app_root, 302)
  end
  return false, client
end

-- check_auth runs the route's basic (or digest) and external auth: an
-- auth that cannot be applied answers 503; with satisfy any, a client the
-- route's lists admit (looked up once) needs neither. It returns the
-- status to answer, or nil to go on.
local function check_auth(route)
  local a, ea = route.auth, route.extauth
  local admitted = route.any_acl ~= nil and ipmatch.admits(route.any_acl, var_get("remote_addr"))
  if a then
    if a.unavailable then
      return 503
    end
    -- nginx.conf then sends no Authorization header to the backend.
    var_set("ingress_clear_authorization", "1")
    if not (admitted and a.satisfy_any) then
      local code = auth.check(a)
      if code then
        return code
      end
    end
  end
  if ea then
    if ea.unavailable then
      return 503
    end
    if not (admitted and ea.satisfy_any) then
      return extauth.check(ea)
    end
  end
  return nil
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
  if not code and (route.auth or route.extauth) then
    code = check_auth(route)
  end
  if code then
    return true, proxy_settings.fail(route.err, code)
  end
  return false
end

-- to_upstream applies the route's rewrite and what it sends upstream.
local function to_upstream(route, m, uri)
  if route.rewrite_path then
    ngx.req.set_uri(filters.modify(route.rewrite_path, route.path, uri))
  end
  if route.rewrite then
    ngx.req.set_uri(rewrite_uri(route, m))
    if route.forwarded_prefix then
      ngx.req.set_header("X-Forwarded-Prefix", route.forwarded_prefix)
    end
  end
  if route.req_headers then
    headers.apply_request(route.req_headers)
  end
  if route.req_filter then
    filters.apply_request(route.req_filter)
  end
  if route.vhost then
    var_set("ingress_upstream_vhost", route.vhost)
  end
  if route.connection then
    var_set("ingress_connection", route.connection)
  end
end

function _M.rewrite()
  check()
  local h, mis = request_host(var_get("host"), server_port())
  if not h then
    return ngx.exit(mis and 421 or 404)
  end
  local uri = var_get("uri")
  local answered, client = enter_host(h, uri)
  if answered then
    return
  end
  local route, m = match(h, uri)
  if route and route.tracing then
    start_span(route.tracing, h.name) -- lua/tracing.lua records it in the log phase
  end
  if route and route.mkey then
    var_set("ingress_metrics", route.mkey) -- lua/metrics.lua counts it in the log phase
  end
  if route and route.resp_headers then
    headers.mark(route.resp_headers)
  end
  if route and route.gw_redirect then
    return gateway_redirect(route, uri)
  end
  if not route or (route.backend == "" and not route.weighted) then
    return proxy_settings.fail(route and route.err, 404) -- the built-in default backend's 404
  end
  if route.closed then
    return ngx.exit(503)
  end
  local limit = route.body_size or conf.body_size
  if limit and limit > 0 then
    check_body(route, limit)
  end
  if route.cors then
    cors.apply(route.cors)
  end
  if route.gw_cors then
    cors.apply_route(route.gw_cors)
  end
  if route.redirect_url then
    return send_redirect(route)
  end
  if route.redirect and var_get("pass_access_scheme") == "http" then
    return redirect_to_https(route)
  end
  if client then
    clientauth.check(client, false)
  end
  if check_access(route) then
    return
  end
  to_upstream(route, m, uri)
  if route.mirrors then
    mirror.send(route.mirrors, route.stream_body, route.rewrite_path ~= nil or route.rewrite ~= nil)
  end
  return proxy(route)
end

function _M.init_worker()
  conf = settings.get()
  local ports = conf.gateway_ports
  if ports and #ports > 0 then
    gateway_prefixes = {}
    for i = 1, #ports do
      local p = ports[i]
      gateway_prefixes[p] = p .. ":"
      gateway_prefixes[tostring(p)] = p .. ":"
    end
  end
  hosts:start(1)
end

return _M
