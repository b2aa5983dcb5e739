-- phases.lua: the one entry point of nginx.conf. Every *_by_lua block of
-- pkg/nginx/nginx.conf.tmpl (and of the fixed locations pkg/nginx/view.go
-- renders) is one call of a function here, which calls the modules that
-- act in that phase, in order. A new phase, or a new module in a phase, is
-- an edit of this file (and, for a new phase, its block in the template);
-- pkg/nginx's TestLuaBlocksCallOnlyPhases fails when a block calls another
-- module directly.
--
--   phase (nginx.conf block)          function                 modules
--   init_by_lua                       init(settings)           settings, metrics
--   init_worker_by_lua                init_worker()            balancer, certificate, router, tracing
--   ssl_client_hello_by_lua           ssl_client_hello()       certificate
--   ssl_certificate_by_lua            ssl_certificate()        certificate
--   rewrite_by_lua, location /        rewrite()                router
--   balancer_by_lua, every upstream   balancer()               balancer
--   header_filter_by_lua *            header_filter()          headers
--   log_by_lua, public server         log()                    limit, balancer, metrics, tracing
--   rewrite_by_lua, /_ingress_auth    auth_rewrite()           extauth
--   rewrite_by_lua, @custom_error     error_page_rewrite()     proxy
--   access_by_lua, @modsec_<profile>  modsecurity_access()     modsecurity
--   content_by_lua, /configuration/   configuration_content()  configuration
--   content_by_lua, /ingress_metrics  metrics_content()        metrics
--   content_by_lua, /ingress_traces   traces_content()         tracing
--   content_by_lua, /healthz          healthz_content()        none ("ok")
--   * only while the cluster sets response headers (add-headers,
--     global-allowed-response-headers): else nginx.conf has no such block.
--
-- init runs in the master before any worker starts: requiring this module
-- has loaded every module (the workers share them), and init gives
-- settings.lua the values nginx.conf rendered, then lets the modules that
-- read them early do so. Traffic metrics are on when the settings have
-- metrics (nginx.conf renders nil when they are off): log then counts the
-- request, else it does not call metrics.lua at all.
--
-- The request phases run on the hot path: each function here is plain
-- calls of functions bound once below, without a loop, a closure or a tail
-- call, so that LuaJIT compiles through it (see nvar.lua;
-- TestRequestPathCompiles in pkg/nginx).

local settings = require("settings")
local configuration = require("configuration")
local balancer = require("balancer")
local certificate = require("certificate")
local router = require("router")
local headers = require("headers")
local limit = require("limit")
local metrics = require("metrics")
local tracing = require("tracing")
local extauth = require("extauth")
local proxy = require("proxy")
local modsecurity = require("modsecurity")

local balance = balancer.balance
local balancer_log = balancer.log
local route = router.rewrite
local limit_log = limit.log
local metrics_log = metrics.log
local tracing_log = tracing.log
local response_headers = headers.filter

local _M = {}

-- metrics_on: nginx.conf's settings turn the traffic metrics on (init).
local metrics_on = false

-- init runs in init_by_lua with the settings nginx.conf rendered (see
-- settings.lua).
function _M.init(s)
  settings.init(s)
  metrics.init()
  metrics_on = metrics.enabled
end

-- init_worker runs in init_worker_by_lua: each store starts following its
-- shared dict.
function _M.init_worker()
  balancer.init_worker()
  certificate.init_worker()
  router.init_worker()
  tracing.init_worker()
end

-- ssl_client_hello runs in ssl_client_hello_by_lua, before OpenSSL decides
-- whether to resume a session.
function _M.ssl_client_hello()
  certificate.client_hello()
end

-- ssl_certificate runs in ssl_certificate_by_lua: the SNI name's
-- certificate and client certificate settings.
function _M.ssl_certificate()
  certificate.call()
end

-- rewrite runs in rewrite_by_lua of the public server's location /: the
-- router picks the route and applies it.
function _M.rewrite()
  route()
end

-- balancer runs in balancer_by_lua of every upstream: the peer.
function _M.balancer()
  balance()
end

-- header_filter runs in header_filter_by_lua (nginx.conf has the block only
-- while the cluster sets response headers): the route's response headers.
function _M.header_filter()
  response_headers()
end

-- log runs in log_by_lua of the public server: the connection limits give
-- back the request's count (once a route of this worker has one), ewma
-- backends observe the response time, and the traffic metrics count the
-- request when they are on.
function _M.log()
  if limit.counting then
    limit_log()
  end
  balancer_log()
  if metrics_on then
    metrics_log()
  end
  if tracing.used then
    tracing_log()
  end
end

-- auth_rewrite runs in rewrite_by_lua of /_ingress_auth, the external auth
-- subrequest.
function _M.auth_rewrite()
  extauth.subrequest()
end

-- error_page_rewrite runs in rewrite_by_lua of @custom_error, the error
-- pages of routes (custom-http-errors).
function _M.error_page_rewrite()
  proxy.error_page()
end

-- configuration_content runs in content_by_lua of /configuration/ on the
-- loopback status server: the configuration endpoints.
-- modsecurity_access: the ModSecurity locations' access phase.
function _M.modsecurity_access()
  modsecurity.access()
end

function _M.configuration_content()
  configuration.call()
end

-- healthz_content runs in content_by_lua of /healthz on the loopback status
-- server: nginx and its Lua side are up.
function _M.healthz_content()
  ngx.say("ok")
end

-- traces_content runs in content_by_lua of /ingress_traces on the loopback
-- status server: the recorded spans, read by the syncer.
function _M.traces_content()
  tracing.serve()
end

-- metrics_content runs in content_by_lua of /ingress_metrics on the
-- loopback status server: the traffic metrics, read by the syncer.
function _M.metrics_content()
  metrics.serve()
end

return _M
