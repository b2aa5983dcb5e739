-- certificate.lua: serves the certificate of the SNI name in
-- ssl_certificate_by_lua (phases.lua's ssl_certificate calls call, its
-- ssl_client_hello client_hello), from the certificates posted to
-- /configuration/certs. Lookup, among the hosts of the connection's port
-- (nginx's own HTTPS port: SNI names as they are; a Gateway HTTPS listener's
-- port: "<port>:<name>", so that two Gateways with one name and different
-- certificates stay apart): exact host, then the wildcard of the host's
-- parent ("*.example.com" for "a.example.com", one label only; on a
-- Gateway's port any number of labels, the longest wildcard first), then,
-- on a Gateway's port, the certificate of "<port>:_" (its HTTPS listener
-- without hostname), then
-- the default certificate (named by the last delta that set
-- "defaultCertificate"), else nginx's placeholder from nginx.conf.
-- PEM is parsed once per change and worker, on first use.
--
-- Client certificates (auth-tls-*): the host entry of the SNI name in
-- router.lua's table (exact, wildcard, "_", as the router looks up the
-- Host header) says whether to verify them: clientauth.lua binds the
-- session to its settings in ssl_client_hello_by_lua (client_hello) and
-- asks for the certificate in ssl_certificate_by_lua (call).

local ssl = require("ngx.ssl")
local clienthello = require("ngx.ssl.clienthello")
local clientauth = require("clientauth")
local settings = require("settings")
local store = require("store")
local router = require("router")

local ngx = ngx
local ngx_log = ngx.log
local ERR = ngx.ERR

local _M = {}

local index = {} -- host -> entry, rebuilt after every change
local default_name = nil

local function build(item)
  return { name = item.name, hosts = item.hosts or {}, cert = item.cert, key = item.key }
end

-- rebuild indexes hosts; when certificates claim the same host, the first
-- by name wins.
local function rebuild(st)
  local names = {}
  for name in pairs(st.items) do
    names[#names + 1] = name
  end
  table.sort(names)
  local idx = {}
  for i = 1, #names do
    local entry = st.items[names[i]]
    for _, host in ipairs(entry.hosts) do
      if idx[host] == nil then
        idx[host] = entry
      end
    end
  end
  index = idx
  default_name = st.dict:get("m:default")
end

local certs = store.new(settings.CERTIFICATES, build, rebuild)
_M.certificates = certs

-- lookup returns the certificate of SNI name host on the port whose
-- names start with prefix ("" for nginx's own).
local function lookup(host, prefix)
  if host then
    host = host:lower()
    local entry = index[prefix .. host]
    if entry then
      return entry
    end
    local dot = host:find(".", 1, true)
    if dot then
      entry = index[prefix .. "*" .. host:sub(dot)]
      if entry then
        return entry
      end
    end
    -- On a Gateway's port a wildcard matches any number of labels: the
    -- wildcards of the further parents, the longest first.
    while prefix ~= "" and dot do
      dot = host:find(".", dot + 1, true)
      entry = dot and index[prefix .. "*" .. host:sub(dot)]
      if entry then
        return entry
      end
    end
  end
  -- A Gateway port's own default: the certificate of its HTTPS listener
  -- without hostname (also for a client that sends no SNI).
  if prefix ~= "" then
    local entry = index[prefix .. "_"]
    if entry then
      return entry
    end
  end
  return default_name and certs.items[default_name]
end

-- server_port returns the connection's server port when it may be a
-- Gateway listener's, nil otherwise.
local function server_port()
  if not router.has_gateway_ports() then
    return nil
  end
  local p = ssl.server_port()
  return p
end

local function parsed(entry)
  if not entry.pcert then
    local c, err = ssl.parse_pem_cert(entry.cert)
    if not c then
      return nil, nil, err
    end
    local k, kerr = ssl.parse_pem_priv_key(entry.key)
    if not k then
      return nil, nil, kerr
    end
    entry.pcert, entry.pkey = c, k
  end
  return entry.pcert, entry.pkey
end

-- client_host returns the router's host entry for the SNI name sni on
-- server port port.
local function client_host(sni, port)
  router.hosts:check()
  if sni then
    sni = sni:lower():gsub("%.$", "") -- as nginx's server name: no trailing dot
  end
  return router.find_host(sni, port)
end

-- sni_host is client_host, or nil after logging an error: the session is
-- then not bound (nor a client certificate asked for), which fails a host
-- that verifies clients closed (clientauth.lua answers 421 or 400) and
-- leaves the other hosts served.
local function sni_host(sni, port)
  local ok, h = pcall(client_host, sni, port)
  if not ok then
    ngx_log(ERR, "cannot look up the host of SNI name ", tostring(sni), ": ", h)
    return nil
  end
  return h
end

-- client_hello runs in ssl_client_hello_by_lua, before OpenSSL decides
-- whether to resume a session.
function _M.client_hello()
  clientauth.bind(sni_host(clienthello.get_client_hello_server_name(), server_port()))
end

-- call runs in ssl_certificate_by_lua.
function _M.call()
  certs:sync()
  local sni = ssl.server_name()
  local port = server_port()
  clientauth.verify(sni_host(sni, port))
  local entry = lookup(sni, router.gateway_prefix(port) or "")
  if not entry then
    return -- nginx's placeholder certificate
  end
  local c, k, err = parsed(entry)
  if not c then
    ngx_log(ERR, "cannot parse certificate ", entry.name, ": ", err)
    return
  end
  local ok, serr = ssl.clear_certs()
  if ok then
    ok, serr = ssl.set_cert(c)
  end
  if ok then
    ok, serr = ssl.set_priv_key(k)
  end
  if not ok then
    ngx_log(ERR, "cannot set certificate ", entry.name, ": ", serr)
    return ngx.exit(ngx.ERROR)
  end
end

function _M.init_worker()
  certs:start(1)
end

return _M
