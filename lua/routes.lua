-- routes.lua: compiles the host items posted to /configuration/routes into
-- the router's lookup tables, outside the request path (router.lua serves
-- from them). Everything a route asks is validated here, once: a host
-- whose item does not compile is refused by the configuration endpoint.
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
--   kind            the kind of that object when not an Ingress ("HTTPRoute"), for inspection
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
--   modsecurity     {profile, txid}: the request goes through the
--                   ModSecurity location of the profile first
--                   (modsecurity.lua); unavailable, or a profile
--                   nginx.conf does not hold, answers 503
--   upstreamTLS     {profile, name}: an https or grpcs backend is proxied
--                   by the profile's fixed locations (nginx.conf's
--                   tls_profiles), proxy-ssl-name name; unavailable, or a
--                   profile this nginx.conf does not hold, answers 503
--   clientAuthUnavailable  the route answers 503: its Ingress's auth-tls
--                   annotations could not be applied (fail closed)
--   customHeadersUnavailable  the route answers 503: its Ingress's
--                   custom-headers ConfigMap is missing (as ingress-nginx)
--   match           {method, headers, query} (Gateway API matches): what a
--                   request must meet, besides the path, to take the route;
--                   headers and query are arrays of {name, value, regex}
--                   (header names lower case, matched ignoring case;
--                   query names exactly; regex: value is a PCRE matching
--                   the whole value). The routes of one path and type are
--                   candidates in the order given (route.next): the first
--                   whose match the request meets takes it, none sends it
--                   on to shorter prefixes (see router.lua).
--   requestHeaderFilter, responseHeaderFilter, routeRedirect, rewritePath
--                   Gateway API filters (see filters.lua); a route with a
--                   routeRedirect needs no backend
--   routeCORS       a Gateway API CORS filter (see cors.lua)
--   routeTimeouts   {requestMillis, backendRequestMillis} (a Gateway API
--                   rule's): the shorter replaces the connect, send and
--                   read timeouts of the route's requests to backends
--   tracing         OpenTelemetry tracing {trustIncoming, operationName,
--                   sampler, ratio, parentBased} (see tracing.lua)
--   backends        [{backend, weight, requestHeaderFilter}] (Gateway API
--                   backendRefs): the route's requests go to one at random
--                   by weight (backend is then ""); a backend "" answers
--                   500; requestHeaderFilter (as the route's, see
--                   filters.lua) changes the requests sent to that backend
--                   only, after the route's filters
--   mirrors         copies of the route's requests, sent in the background
--                   (see mirror.lua)
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
-- first on TLS requests, after the HTTPS redirect on plain HTTP ones),
-- and listeners (a host of a Gateway port with several listeners: their
-- hostnames, "_" for one without; router.lua serves a request only from a
-- host of the listener its Host header selects, and answers 421 over TLS
-- when its SNI name selects another).
--

local settings = require("settings")
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
local metrics = require("metrics")
local mirror = require("mirror")
local tracing = require("tracing")


local ngx = ngx
local re_match = ngx.re.match
local str_find = string.find
local str_byte = string.byte
local str_sub = string.sub
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
  local profiles = settings.get().tls_profiles or {}
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

local MAX_TIMEOUT_MS = 86400000

-- route_timeout returns the seconds (with milliseconds) of a route's
-- routeTimeouts {requestMillis, backendRequestMillis}: the shorter of
-- those set; nil for none.
local function route_timeout(t)
  if t == nil then
    return nil
  end
  if type(t) ~= "table" then
    return nil, "routeTimeouts must be an object"
  end
  local ms
  local set = { t.requestMillis, t.backendRequestMillis } -- either may be nil: no ipairs
  for i = 1, 2 do
    local v = set[i]
    if v ~= nil then
      if type(v) ~= "number" or v < 1 or v > MAX_TIMEOUT_MS or v % 1 ~= 0 then
        return nil, "invalid routeTimeouts"
      end
      ms = ms and math.min(ms, v) or v
    end
  end
  return ms and string.format("%.3f", ms / 1000)
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
  local buffering = settings.get().proxy_buffering
  local proto = route.protocol
  local tls, terr = compile_tls(route, r.upstreamTLS)
  if terr then
    return nil, terr
  end
  if r.modsecurity ~= nil then
    local ms, merr = modsecurity.compile(r.modsecurity, r.path, r.ingress)
    if not ms then
      return nil, merr
    end
    route.modsec = ms
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
  local c, s, rd = r.connectTimeout, r.sendTimeout, r.readTimeout
  local gw, gerr = route_timeout(r.routeTimeouts)
  if gerr then
    return nil, gerr
  end
  if gw then -- a Gateway API rule's: every timeout of the request to a backend
    c, s, rd = gw, gw, gw
  end
  if c or s or rd or tries then
    route.timeouts = (c or "") .. "," .. (s or "") .. "," .. (rd or "") .. (tries and ("," .. tries) or "")
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

local METHOD_MAX, QUERY_NAME_MAX, MATCH_MAX = 32, 256, 64
local MAX_WEIGHTED, MAX_WEIGHT = 64, 1000000

-- compile_weighted returns {names, cum, total, filters} for a route's
-- backends (cum: the running totals of the weights; filters: the request
-- header filter of each backend that has one, by index, nil when none
-- has), nil for none.
local function compile_weighted(list)
  if list == nil then
    return nil
  end
  if type(list) ~= "table" or #list == 0 or #list > MAX_WEIGHTED then
    return nil, "backends must be an array of 1 to " .. MAX_WEIGHTED
  end
  local w = { names = {}, cum = {}, total = 0 }
  for i = 1, #list do
    local b = list[i]
    if type(b) ~= "table" or type(b.backend) ~= "string" or type(b.weight) ~= "number"
        or b.weight < 1 or b.weight > MAX_WEIGHT or b.weight % 1 ~= 0 then
      return nil, "invalid weighted backend"
    end
    w.total = w.total + b.weight
    w.names[i], w.cum[i] = b.backend, w.total
    local f, err = filters.compile_request_filter(b.requestHeaderFilter)
    if err then
      return nil, "weighted backend " .. b.backend .. ": " .. err
    end
    if f then
      w.filters = w.filters or {}
      w.filters[i] = f
    end
  end
  return w
end

-- compile_values validates the header or query conditions of a match
-- and returns them as {var or name, value, re}; header names become the
-- nginx variable $http_<name> ('-' read as '_', as nginx does).
local function compile_values(list, header)
  if list == nil then
    return nil
  end
  if type(list) ~= "table" or #list > MATCH_MAX then
    return nil, "match conditions must be an array of at most " .. MATCH_MAX
  end
  local out = {}
  for i = 1, #list do
    local c = list[i]
    if type(c) ~= "table" or not headers.is_value(c.value) then
      return nil, "invalid match condition"
    end
    local name = c.name
    if header then
      if not headers.is_token(name) or name ~= name:lower() then
        return nil, "invalid match header name"
      end
    elseif type(name) ~= "string" or #name == 0 or #name > QUERY_NAME_MAX or str_find(name, "[%c\127]") then
      return nil, "invalid match query name"
    end
    local cond = { name = name, value = c.value }
    if header then
      cond.var = "http_" .. name:gsub("-", "_")
    end
    if c.regex == true then
      cond.re = "^(?:" .. c.value .. ")\\z"
      local _, err = re_match("", cond.re, "jo")
      if err then
        return nil, "match " .. name .. ": " .. err
      end
    end
    out[i] = cond
  end
  if #out == 0 then
    return nil
  end
  return out
end

-- compile_match returns the compiled match of a route (nil: none).
local function compile_match(m)
  if m == nil then
    return nil
  end
  if type(m) ~= "table" or not (m.method == nil or (type(m.method) == "string" and #m.method <= METHOD_MAX
      and str_find(m.method, "^[A-Z]+$"))) then
    return nil, "invalid match"
  end
  local hs, err = compile_values(m.headers, true)
  if err then
    return nil, err
  end
  local qs, qerr = compile_values(m.query, false)
  if qerr then
    return nil, qerr
  end
  return { method = m.method, headers = hs, query = qs }
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
  -- closed: the route answers 503 (auth-tls or custom-headers fail closed).
  route.closed = (r.clientAuthUnavailable == true or r.customHeadersUnavailable == true) or nil
  local cond, merr = compile_match(r.match)
  if merr then
    return nil, "route " .. r.path .. ": " .. merr
  end
  route.cond = cond
  local weighted, werr = compile_weighted(r.backends)
  if werr then
    return nil, "route " .. r.path .. ": " .. werr
  end
  route.weighted = weighted
  local mirrors, mirr = mirror.compile(r.mirrors)
  if mirr then
    return nil, "route " .. r.path .. ": " .. mirr
  end
  route.mirrors = mirrors
  local fok, ferr = filters.compile(route, r)
  if not fok then
    return nil, "route " .. r.path .. ": " .. ferr
  end
  if r.cors ~= nil then
    local c, err = cors.compile(r.cors)
    if not c then
      return nil, "route " .. r.path .. ": " .. err
    end
    route.cors = c
  end
  if r.routeCORS ~= nil then
    local c, err = cors.compile_route(r.routeCORS)
    if not c then
      return nil, "route " .. r.path .. ": " .. err
    end
    route.gw_cors = c
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
    route.auth = a
  end
  local tok, terr = tracing.compile(route, r)
  if not tok then
    return nil, "route " .. r.path .. ": " .. terr
  end
  if r.extAuth ~= nil then
    local ea, err = extauth.compile(r.extAuth, r)
    if not ea then
      return nil, "route " .. r.path .. ": " .. err
    end
    route.extauth = ea
  end
  local acl, a, ea = route.acl, route.auth, route.extauth
  if acl and not acl.invalid and (a and a.satisfy_any or ea and ea.satisfy_any) then
    -- satisfy any: the lists admit in place of the auth (router.lua's
    -- check_auth), and refuse nobody by themselves.
    route.any_acl, route.acl = acl, nil
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

local MAX_LISTENERS = 64

-- listener_of returns the name of the listener of set (listener
-- hostnames as keys, "_" for one without) that takes the requests for
-- name (a host name, a wildcard or "_"): the exact name, else the longest
-- wildcard of its parents, else "_"; nil for none. It is router.lua's
-- lookup of a Gateway host, on the listeners' names.
local function listener_of(set, name)
  if set[name] then
    return name
  end
  local dot = str_find(name, ".", 2, true)
  while dot do -- at most one lookup per label
    local w = "*" .. str_sub(name, dot)
    if set[w] then
      return w
    end
    dot = str_find(name, ".", dot + 1, true)
  end
  if set["_"] then
    return "_"
  end
  return nil
end
_M.listener_of = listener_of

-- compile_listeners sets h.listeners (the set of the listener hostnames
-- of a Gateway port with several listeners, item.listeners) and
-- h.listener (the one whose requests the host serves: its name's
-- listener); neither for a host without listeners.
local function compile_listeners(h, item)
  local list = item.listeners
  if list == nil then
    return true
  end
  local colon = str_find(item.name, ":", 1, true)
  if type(list) ~= "table" or #list == 0 or #list > MAX_LISTENERS or not colon then
    return nil, "listeners must be an array of 1 to " .. MAX_LISTENERS .. ", on a Gateway port"
  end
  local set = {}
  for i = 1, #list do
    local l = list[i]
    if type(l) ~= "string" or #l == 0 or #l > 253 or not (l == "_" or str_find(l, "^[%w*][%w.-]*$")) then
      return nil, "invalid listener hostname"
    end
    set[l] = true
  end
  h.listeners = set
  h.listener = listener_of(set, str_sub(item.name, colon + 1))
  return true
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
  local lok, lerr = compile_listeners(h, item)
  if not lok then
    return nil, "host " .. item.name .. ": " .. lerr
  end
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
  local last = {} -- the last candidate of each exact and prefix path
  for i = 1, #list do
    local route, err = compile_route(list[i])
    if not route then
      return nil, "host " .. item.name .. ": " .. err
    end
    route.req_headers, route.resp_headers = req, headers.response(resp, route.resp_own, route.resp_filter)
    route.mkey, route.mkey_canary = metrics.route_keys(item.name, list[i]) -- nil: metrics off
    if route.extauth then -- the auth cache is per host too
      route.extauth.prefix = item.name .. "\0" .. (route.extauth.prefix or "")
    end
    if route.type == "regex" then
      h.regex[#h.regex + 1] = route
    else
      local t = h[route.type]
      local key = route.type .. route.path
      if t[route.path] == nil then
        t[route.path] = route
      else -- a candidate more: after those before it
        last[key].next = route
      end
      last[key] = route
    end
    h.n = h.n + 1
  end
  return h
end

return _M
