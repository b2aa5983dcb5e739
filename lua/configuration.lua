-- configuration.lua: the loopback configuration endpoints of the status
-- server (phases.lua's configuration_content). The settings nginx.conf
-- passes to init_by_lua and the shared dict names are settings.lua's.
--
--   GET  /configuration/version   {"checksum", "backendsVersion",
--                                  "certificatesVersion", "backendsGeneration",
--                                  "certificatesGeneration", "pid"}
--   GET  /configuration/backends  {"version", "generation", "backends": [...]}
--                                 ?name=<backend> returns that one backend
--   POST /configuration/backends  {"version", "upserted": [Backend], "removed": [name]}
--   GET  /configuration/certs     {"version", "generation", "defaultCertificate",
--                                  "certificates": [{"name", "hosts", "checksum"}]}
--                                 (never the keys); ?pem=1 adds "cert", the PEM chain
--   GET  /configuration/general   the settings nginx.conf passed to init
--   POST /configuration/certs     {"version", "upserted": [Certificate], "removed": [name],
--                                  "defaultCertificate": name (optional)}
--   GET  /configuration/routes    {"version", "generation", "checksum", "hosts": [Host]}
--                                 ?host=<name> returns that one host
--   POST /configuration/routes    {"version", "upserted": [Host], "removed": [name],
--                                  "checksum": Configuration checksum (optional)}
--
-- A Host is {"name", "routes": [Route]}; routes.lua describes a Route. Its
-- name, and a certificate's host, is "<port>:<name>" on the port of a Gateway
-- listener (router.lua, certificate.lua). The
-- syncer pushes backends and certificates before the routes that use them,
-- and removes them after the routes that used them are gone.
--
-- Wire names are lowerCamel, as in the Go model. Certificate "cert" and "key"
-- are base64 (Go's encoding of []byte) holding PEM.

local cjson = require("cjson.safe")
local ssl = require("ngx.ssl")
local settings = require("settings")
local store = require("store")
local compile_host = require("routes").compile
local var_get = require("nvar").get

local ngx = ngx
local type = type
local tostring = tostring
local concat = table.concat

local BACKENDS = settings.BACKENDS
local CERTIFICATES = settings.CERTIFICATES
local ROUTES = settings.ROUTES
local MAX_VERSION = 99999999999999 -- cjson keeps 14 significant digits

local _M = {}

local function respond(status, body)
  ngx.status = status
  ngx.header["Content-Type"] = "application/json"
  if type(body) == "table" then
    body = cjson.encode(body)
  end
  ngx.say(body)
  return ngx.exit(status)
end

local function fail(status, message)
  return respond(status, { error = message })
end

local function is_name(s)
  -- 320: a certificate is "<namespace>/<secret>", 63 + 1 + 253 characters.
  return type(s) == "string" and #s > 0 and #s <= 320 and s:find("^[%w_][%w%._/%-]*$") ~= nil
end

local function is_int(n, lo, hi)
  return type(n) == "number" and n == math.floor(n) and n >= lo and n <= hi
end

local function opt_string(v, pattern)
  if v == nil or v == cjson.null or v == "" then
    return true, nil
  end
  return type(v) == "string" and #v <= 1024 and v:find(pattern) ~= nil, v
end

-- Normalisers: each takes a decoded item and returns a clean table (only
-- known fields, empty arrays left out so that JSON round-trips) or nil, err.

local function normalize_endpoints(list)
  if list == nil or list == cjson.null then
    return {}
  end
  if type(list) ~= "table" then
    return nil, "endpoints must be an array"
  end
  local out = {}
  for i = 1, #list do
    local ep = list[i]
    if type(ep) ~= "table" or type(ep.address) ~= "string"
        or not ep.address:find("^[%x%.:]+$") or #ep.address > 45
        or not is_int(ep.port, 1, 65535) then
      return nil, "endpoint " .. i .. " needs an IP address and a port"
    end
    out[i] = { address = ep.address, port = ep.port }
  end
  return out
end

local AFFINITY_MODES = { balanced = true, persistent = true }
local SAME_SITE = { None = true, Lax = true, Strict = true }

local function normalize_affinity(a)
  if a == nil or a == cjson.null then
    return true, nil
  end
  if type(a) ~= "table" or type(a.cookieName) ~= "string"
      or not a.cookieName:find("^[%w!#%%&'*+%-.^_`|~]+$") or #a.cookieName > 128 then
    return false, "affinity needs a valid cookieName"
  end
  -- A cookie Path: printable ASCII without ';' (a regex path as written).
  local ok_path, path = opt_string(a.cookiePath, "^/[!-:<-~]*$")
  local ok_domain, domain = opt_string(a.cookieDomain, "^%.?[%w%.%-]+$")
  local ok_same, same_site = opt_string(a.cookieSameSite, "^%a+$")
  if not (ok_path and ok_domain and ok_same) or (same_site and not SAME_SITE[same_site])
      or not AFFINITY_MODES[a.mode or "balanced"] then
    return false, "invalid affinity mode, cookiePath, cookieDomain or cookieSameSite"
  end
  local ages = {}
  for _, k in ipairs({ "cookieMaxAge", "cookieExpires" }) do
    local v = a[k]
    if v ~= nil and v ~= cjson.null and not is_int(v, 0, 2 ^ 31) then
      return false, "invalid affinity " .. k
    end
    ages[k] = (v ~= cjson.null and v ~= 0) and v or nil
  end
  return true, { cookieName = a.cookieName, mode = a.mode or "balanced", cookiePath = path, cookieDomain = domain,
                 cookieMaxAge = ages.cookieMaxAge, cookieExpires = ages.cookieExpires,
                 cookieSecure = a.cookieSecure == true or nil, cookieSameSite = same_site,
                 conditionalSameSiteNone = a.conditionalSameSiteNone == true or nil,
                 changeOnFailure = a.changeOnFailure == true or nil }
end

local function normalize_backend(b)
  if type(b) ~= "table" or not is_name(b.name) then
    return nil, "backend needs a name"
  end
  local endpoints, err = normalize_endpoints(b.endpoints)
  if not endpoints then
    return nil, "backend " .. b.name .. ": " .. err
  end
  local ok_lb, lb = opt_string(b.loadBalance, "^[%w_]+$")
  local ok_hash, hash_by = opt_string(b.upstreamHashBy, "^[%w%$_{}%-]+$")
  local subset = b.upstreamHashBySubsetSize
  local ok_subset = subset == nil or subset == cjson.null or is_int(subset, 0, 1000)
  local ok_aff, affinity = normalize_affinity(b.affinity)
  if not (ok_lb and ok_hash and ok_subset and ok_aff) then
    return nil, "backend " .. b.name .. ": invalid loadBalance, upstreamHashBy, upstreamHashBySubsetSize or affinity"
  end
  return {
    name = b.name,
    namespace = type(b.namespace) == "string" and b.namespace or nil,
    service = type(b.service) == "string" and b.service or nil,
    port = type(b.port) == "string" and b.port or nil,
    endpoints = #endpoints > 0 and endpoints or nil,
    loadBalance = lb,
    upstreamHashBy = hash_by,
    upstreamHashBySubsetSize = hash_by and type(subset) == "number" and subset > 0 and subset or nil,
    affinity = affinity,
    checksum = type(b.checksum) == "string" and b.checksum or nil,
  }
end

local HOST_NAME = "^[%w_%*][%w%._%-]*$"

-- without_port returns s without the "<port>:" that names a host or a
-- certificate host of a Gateway listener's port (config.ServerKey).
local function without_port(s)
  local rest = s:match("^%d%d?%d?%d?%d:(.*)$")
  return rest or s
end

-- is_host_name accepts a host name ("_", exact, "*." wildcard), or one on
-- a Gateway listener's port ("<port>:<name>").
local function is_host_name(s)
  return type(s) == "string" and #s <= 260 and without_port(s):find(HOST_NAME) ~= nil
end

local function normalize_certificate(c)
  if type(c) ~= "table" or not is_name(c.name) then
    return nil, "certificate needs a name"
  end
  local hosts = {}
  if type(c.hosts) == "table" then
    for i = 1, #c.hosts do
      local h = c.hosts[i]
      -- A name, or "<port>:_": a Gateway port's own default certificate.
      if type(h) ~= "string" or not (without_port(h):find("^[%w%*%.%-]+$") or h:find("^%d+:_$")) then
        return nil, "certificate " .. c.name .. ": invalid host"
      end
      hosts[i] = h:lower()
    end
  end
  local cert = type(c.cert) == "string" and ngx.decode_base64(c.cert)
  local key = type(c.key) == "string" and ngx.decode_base64(c.key)
  if not cert or not key then
    return nil, "certificate " .. c.name .. ": cert and key must be base64 PEM"
  end
  local pc, perr = ssl.parse_pem_cert(cert)
  local pk, kerr = ssl.parse_pem_priv_key(key)
  if not pc or not pk then
    return nil, "certificate " .. c.name .. ": " .. tostring(perr or kerr)
  end
  return {
    name = c.name,
    hosts = #hosts > 0 and hosts or nil,
    cert = cert,
    key = key,
    checksum = type(c.checksum) == "string" and c.checksum or nil,
  }
end

-- ROUTE_FIELDS and HOST_FIELDS are the fields of a route and a host that
-- routes.lua compiles (see its header); others are dropped.
local ROUTE_FIELDS = { "upstreamVhost", "connection", "responseHeaders",
  "path", "type", "backend", "ingress", "kind", "redirect", "protocol", "connectTimeout",
  "sendTimeout", "readTimeout", "bodySize", "rewrite", "allow", "deny", "sourceRangeInvalid", "forwardedPrefix", "preserveTrailingSlash",
  "usePortInRedirects", "redirectURL", "redirectCode", "cors", "canary", "proxy", "errors", "auth", "limit",
  "extAuth", "upstreamTLS" }
local HOST_FIELDS = { "requestHeaders", "responseHeaders", "appRoot", "redirectTo", "tls", "block", "digest" }
-- Client certificates (clientauth.lua).
ROUTE_FIELDS[#ROUTE_FIELDS + 1] = "clientAuthUnavailable"
-- custom-headers whose ConfigMap is missing (routes.lua, router.lua).
ROUTE_FIELDS[#ROUTE_FIELDS + 1] = "customHeadersUnavailable"
HOST_FIELDS[#HOST_FIELDS + 1] = "clientAuth"
-- Gateway API matches (routes.lua's compile_match).
ROUTE_FIELDS[#ROUTE_FIELDS + 1] = "match"
-- ModSecurity (modsecurity.lua).
ROUTE_FIELDS[#ROUTE_FIELDS + 1] = "modsecurity"
-- Gateway API filters (filters.lua) and weighted backends.
for _, k in ipairs({ "requestHeaderFilter", "responseHeaderFilter", "routeRedirect", "rewritePath", "backends",
    "routeTimeouts", "routeCORS", "tracing" }) do
  ROUTE_FIELDS[#ROUTE_FIELDS + 1] = k
end
-- Request mirrors (mirror.lua).
ROUTE_FIELDS[#ROUTE_FIELDS + 1] = "mirrors"
-- The listeners of a Gateway port (routes.lua's compile_listeners).
HOST_FIELDS[#HOST_FIELDS + 1] = "listeners"

-- normalize_host keeps the known fields of a host and its routes, and
-- refuses a host that routes.lua cannot compile.
local function normalize_host(h)
  if type(h) ~= "table" or not is_host_name(h.name) then
    return nil, "host needs a valid name"
  end
  if h.unavailable == true then
    return { name = h.name, unavailable = true }
  end
  local routes = {}
  if h.routes ~= nil and h.routes ~= cjson.null then
    if type(h.routes) ~= "table" then
      return nil, "host " .. h.name .. ": routes must be an array"
    end
    for i = 1, #h.routes do
      local r = h.routes[i]
      if type(r) ~= "table" then
        return nil, "host " .. h.name .. ": route " .. i .. " is not an object"
      end
      local clean = {}
      for _, k in ipairs(ROUTE_FIELDS) do
        local v = r[k]
        if v ~= cjson.null then
          clean[k] = v
        end
      end
      for _, k in ipairs({ "allow", "deny" }) do
        if clean[k] ~= nil and (type(clean[k]) ~= "table" or #clean[k] == 0) then
          return nil, "host " .. h.name .. ": route " .. i .. ": " .. k .. " must be a non-empty array"
        end
      end
      routes[i] = clean
    end
  end
  local item = { name = h.name, routes = routes }
  for _, k in ipairs(HOST_FIELDS) do
    if h[k] ~= cjson.null then
      item[k] = h[k]
    end
  end
  local ok, err = compile_host(item)
  if not ok then
    return nil, err
  end
  if #routes == 0 then
    item.routes = nil
  end
  return item
end

local function read_body()
  ngx.req.read_body()
  local body = ngx.req.get_body_data()
  if body then
    return body
  end
  local file = ngx.req.get_body_file()
  if not file then
    return nil
  end
  local f, err = io.open(file, "rb")
  if not f then
    return nil, err
  end
  body = f:read("*a")
  f:close()
  return body
end

-- post_delta decodes and validates a delta, then writes it to the dict.
-- meta_fields maps optional name-valued delta fields to metadata keys.
local function post_delta(dict_name, normalize, meta_fields, valid_name)
  valid_name = valid_name or is_name
  local body, rerr = read_body()
  if not body then
    return fail(400, "empty body " .. tostring(rerr or ""))
  end
  local delta, err = cjson.decode(body)
  if type(delta) ~= "table" then
    return fail(400, "invalid JSON: " .. tostring(err))
  end
  if not is_int(delta.version, 0, MAX_VERSION) then
    return fail(400, "version must be a non-negative integer")
  end
  local items, removed = {}, {}
  local upserted = delta.upserted
  if upserted ~= nil and upserted ~= cjson.null then
    if type(upserted) ~= "table" then
      return fail(400, "upserted must be an array")
    end
    for i = 1, #upserted do
      local item, nerr = normalize(upserted[i])
      if not item then
        return fail(400, nerr)
      end
      items[i] = { name = item.name, json = cjson.encode(item) }
    end
  end
  local rm = delta.removed
  if rm ~= nil and rm ~= cjson.null then
    if type(rm) ~= "table" then
      return fail(400, "removed must be an array")
    end
    for i = 1, #rm do
      if not valid_name(rm[i]) then
        return fail(400, "invalid name in removed")
      end
      removed[i] = rm[i]
    end
  end
  local meta = {}
  for field, key in pairs(meta_fields or {}) do
    local v = delta[field]
    if v ~= nil and v ~= cjson.null and v ~= "" then
      if type(v) ~= "string" or #v > 256 or not v:find("^[%w_:+=/%.%-]+$") then
        return fail(400, "invalid " .. field)
      end
      meta[key] = v
    end
  end
  local status, msg, version, gen = store.write(dict_name, delta.version, items, removed, meta)
  if status ~= 200 then
    return respond(status, { error = msg, version = version })
  end
  return respond(200, { version = version, generation = gen })
end

-- get_items answers a GET of a whole dict (its items under list_field, after
-- the extra fields) or, with ?<arg>=<name>, of one item.
local function get_items(dict_name, arg, list_field, extra)
  local name = var_get("arg_" .. arg)
  if name then
    local json = store.item(dict_name, ngx.unescape_uri(name))
    if not json then
      return fail(404, "no such " .. arg)
    end
    return respond(200, json)
  end
  local version, gen, items = store.dump(dict_name)
  return respond(200, '{"version":' .. version .. ',"generation":' .. gen .. (extra or "") ..
    ',"' .. list_field .. '":[' .. concat(items, ",") .. "]}")
end

local function get_backends()
  return get_items(BACKENDS, "name", "backends")
end

local function get_certificates()
  local version, gen, items = store.dump(CERTIFICATES)
  local out = {}
  for i = 1, #items do
    local c = cjson.decode(items[i])
    if c then
      -- ?pem=1 adds the certificate chain (syncer certs); never the key.
      local pem = var_get("arg_pem") == "1" and c.cert or nil
      out[#out + 1] = cjson.encode({ name = c.name, hosts = c.hosts, checksum = c.checksum, cert = pem })
    end
  end
  return respond(200, '{"version":' .. version .. ',"generation":' .. gen ..
    ',"defaultCertificate":' .. cjson.encode(store.meta(CERTIFICATES, "default") or "") ..
    ',"certificates":[' .. concat(out, ",") .. "]}")
end

local function get_routes()
  return get_items(ROUTES, "host", "hosts",
    ',"checksum":' .. cjson.encode(store.meta(ROUTES, "checksum") or ""))
end

local function get_version()
  local bv, bg = store.state(BACKENDS)
  local cv, cg = store.state(CERTIFICATES)
  local rv, rg = store.state(ROUTES)
  return respond(200, {
    checksum = settings.get().checksum,
    configuration = store.meta(ROUTES, "checksum") or "",
    backendsVersion = bv, backendsGeneration = bg,
    certificatesVersion = cv, certificatesGeneration = cg,
    routesVersion = rv, routesGeneration = rg,
    pid = ngx.worker.pid(),
  })
end

-- get_general answers the settings nginx.conf gave init (syncer general).
local function get_general()
  return respond(200, settings.get())
end

local endpoints = {
  ["GET /configuration/version"] = get_version,
  ["GET /configuration/general"] = get_general,
  ["GET /configuration/backends"] = get_backends,
  ["POST /configuration/backends"] = function() return post_delta(BACKENDS, normalize_backend) end,
  ["GET /configuration/certs"] = get_certificates,
  ["GET /configuration/routes"] = get_routes,
  ["POST /configuration/routes"] = function()
    return post_delta(ROUTES, normalize_host, { checksum = "checksum" }, is_host_name)
  end,
  ["POST /configuration/certs"] = function()
    return post_delta(CERTIFICATES, normalize_certificate, { defaultCertificate = "default" })
  end,
}

local function loopback(addr)
  return addr == "127.0.0.1" or addr == "::1"
end

-- call serves the configuration endpoints (content_by_lua of
-- /configuration/, through phases.lua).
function _M.call()
  if not loopback(var_get("remote_addr")) then
    return fail(403, "loopback only")
  end
  local handler = endpoints[ngx.req.get_method() .. " " .. var_get("uri")]
  if not handler then
    return fail(404, "no such endpoint")
  end
  return handler()
end

return _M
