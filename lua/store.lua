-- store.lua: named JSON items kept in a lua_shared_dict, written as deltas by
-- the configuration endpoint and read by every worker.
--
-- Shared dict keys:
--   "version"      the controller's version of the last accepted delta
--   "generation"   bumped once per accepted delta, written last
--   "d:<name>"     the item as JSON
--   "g:<name>"     generation of the last change of <name>; stays after a
--                  removal (tombstone) so that workers notice it
--   "c:<gen>"      names changed by generation <gen>, newline separated
--   "m:<key>"      metadata set with a delta (the default certificate name)
--   "lock"         held while a delta is written
--
-- Each worker keeps decoded items in a Lua table. The hot path
-- (Store:check once per request, then Store:lookup) costs one shared dict
-- read when nothing changed; router.lua skips even that while the epoch
-- (below) stays the same. When the generation moved, lookup reloads only the
-- requested item synchronously, and a 0-delay timer brings every other
-- changed item up to date outside requests.

local cjson = require("cjson.safe")
local nvar = require("nvar")
local settings = require("settings")

local ngx = ngx
local ngx_log = ngx.log
local ERR = ngx.ERR
local WARN = ngx.WARN
local str_byte = string.byte
local str_sub = string.sub
local concat = table.concat

local CHANGELOG = 1024   -- generations kept in "c:<gen>"
local YIELD_EVERY = 256  -- items decoded between yields in a full sync
local LOCK_TRIES = 2000  -- 1 ms apart

local _M = {}

local Store = {}
local store_mt = { __index = Store }

-- new returns a worker-local view of the dict. build(item, old_entry) turns
-- a decoded item into the worker's entry (or nil, err); on_change(store) runs
-- after a sync that changed something. keep_removed, in seconds, keeps the
-- entries of removed items that long for Store:removed.
function _M.new(dict_name, build, on_change, keep_removed)
  local dict = ngx.shared[dict_name]
  if not dict then
    error("lua_shared_dict " .. dict_name .. " is not defined")
  end
  return setmetatable({
    dict = dict, build = build, on_change = on_change, keep_removed = keep_removed,
    items = {}, gens = {}, gone = {}, gen = -1, timer = false, yield = false, stale = true,
  }, store_mt)
end

-- drop removes <name> from the worker table, keeping its entry in gone when
-- the store keeps removed entries.
function Store:drop(name)
  local old = self.items[name]
  if old ~= nil and self.keep_removed then
    self.gone[name] = { entry = old, at = nvar.now() }
  end
  self.items[name] = nil
end

-- load decodes item <name> at generation g into the worker table.
function Store:load(name, g)
  local json = self.dict:get("d:" .. name)
  if not json then
    self:drop(name)
    self.gens[name] = g
    return true
  end
  local item, err = cjson.decode(json)
  if not item then
    ngx_log(ERR, "cannot decode stored item ", name, ": ", err)
    return false
  end
  local entry, berr = self.build(item, self.items[name])
  if not entry then
    ngx_log(ERR, "cannot use stored item ", name, ": ", berr)
    return false
  end
  self.items[name] = entry
  self.gens[name] = g
  self.gone[name] = nil
  return true
end

-- refresh reloads <name> if it changed since this worker loaded it.
function Store:refresh(name)
  local g = self.dict:get("g:" .. name)
  if g ~= self.gens[name] then
    return self:load(name, g), true
  end
  return true, false
end

local sync_timer

function Store:schedule()
  if self.timer then
    return
  end
  local ok, err = ngx.timer.at(0, sync_timer, self)
  if not ok then
    ngx_log(WARN, "cannot schedule configuration sync: ", err)
    return
  end
  self.timer = true
end

-- check reads the dict's generation once: until the next check, lookup
-- serves from the worker table, loading an item first only when the dict
-- moved since this worker's last sync. Call it once per request.
function Store:check()
  local gen = self.dict:get("generation") or 0
  self.stale = gen ~= self.gen
  if self.stale then
    self:schedule()
  end
end

-- lookup returns the entry for <name>, current as of the last check.
function Store:lookup(name)
  if self.stale then
    self:refresh(name)
  end
  return self.items[name]
end

-- removed returns the entry of <name> for a request that started at
-- started (nvar.start_time()), if the item was removed after that and at
-- most keep_removed seconds ago: requests that began before a removal keep
-- what they were routed to, later ones do not see it.
function Store:removed(name, started)
  local g = self.gone[name]
  if g and started <= g.at and nvar.now() - g.at <= self.keep_removed then
    return g.entry
  end
  return nil
end

-- expire forgets removed entries older than keep_removed.
function Store:expire()
  if not self.keep_removed or next(self.gone) == nil then
    return
  end
  local now = nvar.now()
  for name, g in pairs(self.gone) do
    if now - g.at > self.keep_removed then
      self.gone[name] = nil
    end
  end
end

-- changed_since returns the set of names changed after generation from, or
-- nil when the change log does not reach back that far.
function Store:changed_since(from, to)
  if from < 0 or to - from > CHANGELOG then
    return nil
  end
  local names = {}
  for g = from + 1, to do
    local list = self.dict:get("c:" .. g)
    if list == nil then
      return nil
    end
    for name in list:gmatch("[^\n]+") do
      names[name] = true
    end
  end
  return names
end

-- full reloads every item, yielding now and then when allowed.
function Store:full()
  local keys = self.dict:get_keys(0)
  local seen, n = {}, 0
  for i = 1, #keys do
    local key = keys[i]
    if str_byte(key, 1) == 100 and str_byte(key, 2) == 58 then -- "d:"
      local name = str_sub(key, 3)
      seen[name] = true
      self:refresh(name)
      n = n + 1
      if self.yield and n % YIELD_EVERY == 0 then
        ngx.sleep(0)
      end
    end
  end
  for name in pairs(self.items) do
    if not seen[name] then
      self:drop(name)
      self.gens[name] = nil
    end
  end
end

-- sync brings the worker table to the current generation.
function Store:sync()
  self:expire()
  local gen = self.dict:get("generation") or 0
  if gen == self.gen then
    return false
  end
  local names = self:changed_since(self.gen, gen)
  if names then
    for name in pairs(names) do
      self:refresh(name)
    end
  else
    self:full()
  end
  self.gen = gen
  -- Fresh unless a write landed while this sync yielded: the epoch it
  -- bumped makes the next request check again.
  self.stale = (self.dict:get("generation") or 0) ~= gen
  if self.on_change then
    self.on_change(self)
  end
  return true
end

sync_timer = function(premature, self)
  if not premature then
    self.yield = true
    local ok, err = pcall(self.sync, self)
    self.yield = false
    if not ok then
      ngx_log(ERR, "configuration sync failed: ", err)
    end
  end
  self.timer = false
end

-- start loads everything in a timer now, then checks every interval seconds
-- so that idle workers converge too.
function Store:start(interval)
  self:schedule()
  local ok, err = ngx.timer.every(interval, function(premature)
    if not premature and not self.timer then
      self.timer = true
      sync_timer(false, self)
    end
  end)
  if not ok then
    ngx_log(ERR, "cannot start configuration sync timer: ", err)
  end
end

-- Writer side, used by configuration.lua.

local function lock(dict)
  for _ = 1, LOCK_TRIES do
    local ok, err = dict:add("lock", true, 10)
    if ok then
      return true
    end
    if err ~= "exists" then
      return nil, err
    end
    ngx.sleep(0.001)
  end
  return nil, "timeout waiting for the configuration lock"
end

-- write_locked stores items ({name=, json=}), removes names and sets the
-- metadata in meta. It stops at the first failure but always publishes what
-- it wrote.
local function write_locked(dict, version, items, removed, meta)
  local current = dict:get("version") or 0
  if version < current then
    return 409, "stale version " .. version .. " < " .. current, current
  end
  local gen = (dict:get("generation") or 0) + 1
  local names, failure = {}, nil
  for i = 1, #items do
    local it = items[i]
    local ok, err = dict:safe_set("d:" .. it.name, it.json)
    if ok then
      ok, err = dict:safe_set("g:" .. it.name, gen)
    end
    if not ok then
      failure = "cannot store " .. it.name .. ": " .. tostring(err)
      break
    end
    names[#names + 1] = it.name
  end
  for i = 1, failure and 0 or #removed do
    dict:delete("d:" .. removed[i])
    local ok, err = dict:safe_set("g:" .. removed[i], gen)
    if not ok then
      failure = "cannot remove " .. removed[i] .. ": " .. tostring(err)
      break
    end
    names[#names + 1] = removed[i]
  end
  for key, value in pairs(failure and {} or meta or {}) do
    local ok, err = dict:safe_set("m:" .. key, value)
    if not ok then
      failure = "cannot store " .. key .. ": " .. tostring(err)
      break
    end
  end
  local ok, err = dict:safe_set("c:" .. gen, concat(names, "\n"))
  if not ok then
    -- Workers that miss this entry fall back to a full sync.
    ngx_log(WARN, "cannot store change log entry: ", err)
  end
  dict:delete("c:" .. (gen - CHANGELOG))
  if not failure then
    dict:set("version", version)
  end
  dict:set("generation", gen)
  if failure then
    return 507, failure, version
  end
  return 200, nil, version, gen
end

-- EPOCH is the key, in the routes dict (EPOCH_DICT), that every write to
-- any store bumps after its generation: one read of it tells a request
-- whether any store may have moved since the previous request of this
-- worker (see epoch).
local EPOCH = "epoch"
local EPOCH_DICT = settings.ROUTES

-- epoch returns the epoch counter (0 before the first write).
function _M.epoch()
  return ngx.shared[EPOCH_DICT]:get(EPOCH) or 0
end

-- write applies one delta under the dict lock. It returns an HTTP status, an
-- error message (nil on success), the stored version and the generation.
function _M.write(dict_name, version, items, removed, meta)
  local dict = ngx.shared[dict_name]
  local ok, err = lock(dict)
  if not ok then
    return 503, err
  end
  local pok, status, msg, v, gen = pcall(write_locked, dict, version, items, removed, meta)
  ngx.shared[EPOCH_DICT]:incr(EPOCH, 1, 0)
  dict:delete("lock")
  if not pok then
    return 500, tostring(status)
  end
  return status, msg, v, gen
end

-- dump returns the version, the generation and the JSON of every item,
-- sorted by name, as stored (no worker state involved).
function _M.dump(dict_name)
  local dict = ngx.shared[dict_name]
  local keys = dict:get_keys(0)
  local names = {}
  for i = 1, #keys do
    local key = keys[i]
    if str_byte(key, 1) == 100 and str_byte(key, 2) == 58 then
      names[#names + 1] = str_sub(key, 3)
    end
  end
  table.sort(names)
  local out = {}
  for i = 1, #names do
    out[#out + 1] = dict:get("d:" .. names[i])
  end
  return dict:get("version") or 0, dict:get("generation") or 0, out
end

-- state returns the version and generation of a dict.
function _M.state(dict_name)
  local dict = ngx.shared[dict_name]
  return dict:get("version") or 0, dict:get("generation") or 0
end

-- meta returns a metadata value, or nil.
function _M.meta(dict_name, key)
  return ngx.shared[dict_name]:get("m:" .. key)
end

-- item returns the stored JSON of one item, or nil.
function _M.item(dict_name, name)
  return ngx.shared[dict_name]:get("d:" .. name)
end

return _M
