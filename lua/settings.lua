-- settings.lua: the settings nginx.conf passes to init_by_lua and the names
-- of nginx.conf's shared dicts. It is the leaf of the module graph: it
-- requires nothing, and every module that needs a setting or a dict name
-- requires it (lua/modules_test.go fails on a require cycle).
--
-- phases.lua's init calls init with the rendered values, in the master,
-- before any worker starts; modules read them with get() in init_worker or
-- later (phases.lua's init calls the init of a module that reads them
-- earlier), never while they load: get raises an error before init.
--
-- The fields (pkg/nginx/nginx.conf.tmpl renders them):
--   checksum        the rendered nginx.conf's checksum (GET /configuration/version)
--   max_tries       proxy_next_upstream_tries, for balancer.lua
--   no_endpoints    the address of the server that answers 503 (balancer.lua)
--   https_port, redirect_code, body_size   router.lua's redirects and body limit
--   proxy_buffering nginx.conf's proxy_buffering, "on" or "off" (proxy.lua)
--   tls_profiles    the set of backend TLS profiles nginx.conf holds (routes.lua)
--   error_sets      the error code sets nginx.conf holds, name by list "404,503"
--                   (proxy.lua; pkg/nginx/errorsets.go)
--   modsec_profiles the set of ModSecurity profiles nginx.conf holds
--                   (modsecurity.lua); nil when none
--   metrics         metrics.lua's settings; nil: traffic metrics are off
--   gateway_ports   the ports of Gateway listeners, a list of numbers; nil
--                   for none (router.lua, certificate.lua)

local _M = {
  -- The lua_shared_dict names of nginx.conf.
  BACKENDS = "ingress_backends", -- balancer.lua's store
  CERTIFICATES = "ingress_certificates", -- certificate.lua's store
  ROUTES = "ingress_routes", -- router.lua's store, and store.lua's epoch
  LIMITS = "ingress_limits", -- limit.lua, digest.lua's nonces
  AUTH_CACHE = "ingress_auth_cache", -- extauth.lua
  METRICS = "ingress_metrics", -- metrics.lua
  TRACES = "ingress_traces", -- tracing.lua's spans for the syncer
}

local values = nil

-- init sets the settings (phases.lua's init, from init_by_lua).
function _M.init(s)
  if type(s) ~= "table" then
    error("settings must be a table", 2)
  end
  values = s
end

-- get returns the settings table init was given.
function _M.get()
  if values == nil then
    error("settings read before init_by_lua set them", 2)
  end
  return values
end

return _M
