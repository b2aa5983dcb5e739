-- balancer.lua: picks the peer of upstream_balancer for every proxied
-- request, from the backends posted to /configuration/backends
-- (phases.lua's balancer; its log and init_worker call log and
-- init_worker).
--
-- The backend name comes from $proxy_upstream_name, set by each location.
-- A backend with an affinity cookie uses balancer/sticky (affinity wins
-- over hashing, as in ingress-nginx), one with upstreamHashBy balancer/chash
-- (with or without subsets), loadBalance "ewma" balancer/ewma, anything
-- else balancer/round_robin. A request for an unknown backend, or one without
-- endpoints, goes to the internal no-endpoints server, which answers 503.

local ngx_balancer = require("ngx.balancer")
local settings = require("settings")
local store = require("store")
local round_robin = require("balancer.round_robin")
local ewma = require("balancer.ewma")
local chash = require("balancer.chash")
local sticky = require("balancer.sticky")

local ngx = ngx
local nvar = require("nvar")
local var_get = nvar.get
local set_current_peer = ngx_balancer.set_current_peer
local set_more_tries = ngx_balancer.set_more_tries
local get_last_failure = ngx_balancer.get_last_failure
local set_timeouts = ngx_balancer.set_timeouts
local min = math.min
local tonumber = tonumber

local _M = {}

local function endpoints_of(item)
  local out = {}
  local list = item.endpoints or {}
  for i = 1, #list do
    local ep = list[i]
    local host = ep.address
    if host:find(":", 1, true) then
      host = "[" .. host .. "]" -- IPv6: set_current_peer needs brackets
    end
    out[i] = { address = ep.address, port = ep.port, host = host, id = host .. ":" .. ep.port }
  end
  return out
end

-- ewma_seen is set once this worker built an ewma backend: until then the
-- log phase has nothing to observe and returns at once.
local ewma_seen = false

-- build turns a stored backend into this worker's entry; old is the previous
-- entry of the same name, whose balancer state is kept when the kind stays.
local function build(item, old)
  local endpoints = endpoints_of(item)
  local kind
  if item.affinity then
    kind = "sticky"
  elseif item.upstreamHashBy then
    kind = "chash"
  elseif item.loadBalance == "ewma" then
    kind = "ewma"
  else
    kind = "round_robin"
  end
  local prev = old and old.kind == kind and old.algo or nil
  local algo
  if kind == "sticky" then
    algo = sticky.new(endpoints, item)
  elseif kind == "chash" then
    algo = chash.new(endpoints, item)
  elseif kind == "ewma" then
    algo = ewma.new(endpoints, prev)
  else
    algo = round_robin.new(endpoints, prev)
  end
  if kind == "ewma" then
    ewma_seen = true
  end
  return { name = item.name, n = #endpoints, kind = kind, algo = algo, endpoints = endpoints }
end

-- KEEP_REMOVED bounds how long a request routed to a backend may still use
-- it after its removal; beyond it the request gets 503.
local KEEP_REMOVED = 600

local backends = store.new(settings.BACKENDS, build, nil, KEEP_REMOVED)
_M.backends = backends

-- Read from the settings rendered into nginx.conf by init_worker.
local max_tries = 3
local no_endpoints = nil

-- timeouts parses $ingress_timeouts ("connect,send,read" in seconds, with
-- milliseconds after a '.' for a Gateway API rule's, each possibly empty,
-- then optionally ",tries": proxy-next-upstream-tries),
-- caching the result by string; it returns the tries.
local timeouts_cache = {} -- bounded: one entry per distinct timeouts of routes
local function apply_timeouts(s)
  local t = timeouts_cache[s]
  if not t then
    local c, snd, r, tries = s:match("^([%d.]*),([%d.]*),([%d.]*),?(%d*)$")
    t = { tonumber(c), tonumber(snd), tonumber(r), tonumber(tries) }
    timeouts_cache[s] = t
  end
  if t[1] or t[2] or t[3] then
    local ok, err = pcall(set_timeouts, t[1], t[2], t[3])
    if not ok then
      ngx.log(ngx.ERR, "cannot set upstream timeouts ", s, ": ", err)
    end
  end
  return t[4]
end

-- balance runs in balancer_by_lua.
function _M.balance()
  local timeouts = var_get("ingress_timeouts")
  local tries
  if timeouts and timeouts ~= "" then
    tries = apply_timeouts(timeouts)
  end
  local name = var_get("proxy_upstream_name")
  -- router.lua checked the store for this request. A backend removed since
  -- the request began keeps serving it (an upload still arriving), for
  -- KEEP_REMOVED seconds.
  local entry = name and (backends:lookup(name) or backends:removed(name, nvar.start_time()))
  if not entry or entry.n == 0 then
    local ok, err = set_current_peer(no_endpoints)
    if not ok then
      ngx.log(ngx.ERR, "cannot route to the no-endpoints server: ", err)
    end
    return
  end
  local algo = entry.algo
  local ep
  if get_last_failure() == nil then
    local more = min(entry.n, tries or max_tries) - 1
    if more > 0 then
      set_more_tries(more)
    end
    ep = algo:pick()
  else
    local ctx = ngx.ctx
    local attempt = (ctx.balancer_attempt or 1) + 1
    ctx.balancer_attempt = attempt
    ep = algo:retry(attempt)
  end
  local ok, err = set_current_peer(ep.host, ep.port)
  if not ok then
    ngx.log(ngx.ERR, "cannot set peer ", ep.id, " of backend ", name, ": ", err)
  end
end

-- log runs in log_by_lua and feeds response times to ewma backends.
function _M.log()
  if not ewma_seen then
    return
  end
  local name = var_get("proxy_upstream_name")
  if not name then
    return
  end
  local entry = backends.items[name]
  if entry and entry.kind == "ewma" then
    entry.algo:observe(var_get("upstream_addr"), var_get("upstream_response_time"))
  end
end

function _M.init_worker()
  local conf = settings.get()
  max_tries, no_endpoints = conf.max_tries, conf.no_endpoints
  math.randomseed(nvar.now() * 1000 + ngx.worker.pid())
  backends:start(1)
end

return _M
