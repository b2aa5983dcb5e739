-- auth.lua: HTTP basic auth of a route (auth-type basic), as nginx's
-- auth_basic with auth_basic_user_file, and digest (digest = true; see
-- digest.lua). A route's auth is
--   { realm = "...", users = [{name, hash}], digest = bool }  or  { unavailable = true }
-- (the syncer could not apply the Ingress's auth annotations: 503, fail
-- closed); satisfyAny = true (satisfy any) lets a client the route's
-- allow-list admits (and its deny-list does not name) in without
-- credentials (router.lua's check_auth). Hashes were validated by
-- pkg/model (ParseHtpasswd); here:
--   $apr1$        Apache MD5 (its own loop over ngx.md5_bin)
--   {SHA}         base64 of SHA-1 (ngx.sha1_bin); {SSHA} with a salt
--   others        libcrypt's crypt_r through the FFI ($2a$/$2b$/$2y$
--                 bcrypt, $1$ MD5, $5$/$6$ SHA-crypt, DES)
-- Hashes are compared in constant time. A bounded per-worker LRU remembers
-- the verified Authorization headers (keyed by their SHA-1, with the hash
-- they matched, so that a new hash is verified again): bcrypt and the
-- 1000 MD5 rounds of apr1 cost far more than a request.

local ffi = require("ffi")
local lrucache = require("resty.lrucache")
local digest = require("digest")
local equal = require("secure").equal

local ngx = ngx
local var_get = require("nvar").get
local md5_bin = ngx.md5_bin
local sha1_bin = ngx.sha1_bin
local decode_base64 = ngx.decode_base64
local encode_base64 = ngx.encode_base64
local str_byte = string.byte
local str_sub = string.sub
local str_find = string.find
local band, bor, rshift, lshift = bit.band, bit.bor, bit.rshift, bit.lshift

local _M = {}

local CACHE_SIZE = 1024
local cache = lrucache.new(CACHE_SIZE)

ffi.cdef [[
char *crypt_r(const char *phrase, const char *setting, void *data);
]]
local libcrypt
do
  local ok, lib = pcall(ffi.load, "libcrypt.so.1")
  if ok then
    libcrypt = lib
  end
end
local CRYPT_DATA_SIZE = 32768 -- libxcrypt's struct crypt_data
local crypt_data

local ITOA64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

local function to64(v, n, out)
  for _ = 1, n do
    local i = band(v, 0x3f) + 1
    out[#out + 1] = str_sub(ITOA64, i, i)
    v = rshift(v, 6)
  end
end

-- apr1 computes Apache's $apr1$ hash of pw with salt.
local function apr1(pw, salt)
  local magic = "$apr1$"
  local final = md5_bin(pw .. salt .. pw)
  local ctx = { pw, magic, salt }
  local n = #pw
  while n > 0 do
    ctx[#ctx + 1] = str_sub(final, 1, n > 16 and 16 or n)
    n = n - 16
  end
  n = #pw
  while n > 0 do
    ctx[#ctx + 1] = band(n, 1) == 1 and "\0" or str_sub(pw, 1, 1)
    n = rshift(n, 1)
  end
  final = md5_bin(table.concat(ctx))
  -- Round i hashes (odd i) pw [salt] [pw] final, or (even i) final [salt]
  -- [pw] pw, salt when i % 3 ~= 0 and pw when i % 7 ~= 0: one concat a
  -- round from the four precomputed middles.
  local mid = { [0] = "", salt, pw, salt .. pw } -- index: (i%3~=0) + 2*(i%7~=0)
  local odd, even = {}, {}
  for k = 0, 3 do
    odd[k], even[k] = pw .. mid[k], mid[k] .. pw
  end
  for i = 0, 999 do
    local k = (i % 3 ~= 0 and 1 or 0) + (i % 7 ~= 0 and 2 or 0)
    if band(i, 1) == 1 then
      final = md5_bin(odd[k] .. final)
    else
      final = md5_bin(final .. even[k])
    end
  end
  local f = { str_byte(final, 1, 16) }
  local out = { magic, salt, "$" }
  local groups = { { 1, 7, 13 }, { 2, 8, 14 }, { 3, 9, 15 }, { 4, 10, 16 }, { 5, 11, 6 } }
  for _, g in ipairs(groups) do
    to64(bor(lshift(f[g[1]], 16), lshift(f[g[2]], 8), f[g[3]]), 4, out)
  end
  to64(f[12], 2, out)
  return table.concat(out)
end
_M.apr1 = apr1

-- crypt hashes pw with libcrypt's crypt_r; nil when it cannot.
local function crypt(pw, setting)
  if not libcrypt then
    return nil
  end
  if not crypt_data then
    crypt_data = ffi.new("char[?]", CRYPT_DATA_SIZE)
  end
  local r = libcrypt.crypt_r(pw, setting, crypt_data)
  if r == nil then
    return nil
  end
  local s = ffi.string(r)
  if str_byte(s, 1) == 42 then -- "*0"/"*1": libxcrypt's failure tokens
    return nil
  end
  return s
end
_M.crypt = crypt

-- verify reports whether pw matches hash.
local function verify(pw, hash)
  if str_sub(hash, 1, 6) == "$apr1$" then
    local salt = str_sub(hash, 7, (str_find(hash, "$", 7, true) or 0) - 1)
    return equal(apr1(pw, salt), hash)
  end
  if str_sub(hash, 1, 5) == "{SHA}" then
    return equal(encode_base64(sha1_bin(pw)), str_sub(hash, 6))
  end
  if str_sub(hash, 1, 6) == "{SSHA}" then
    local raw = decode_base64(str_sub(hash, 7))
    if not raw or #raw <= 20 then
      return false
    end
    return equal(sha1_bin(pw .. str_sub(raw, 21)), str_sub(raw, 1, 20))
  end
  local got = crypt(pw, hash)
  return got ~= nil and equal(got, hash)
end
_M.verify = verify

-- compile returns the worker's form of a route's auth, or nil and an error.
function _M.compile(a)
  if type(a) ~= "table" then
    return nil, "auth must be an object"
  end
  if a.unavailable == true then
    return { unavailable = true }
  end
  if type(a.realm) ~= "string" or str_find(a.realm, '["\\%c]') then
    return nil, "auth: invalid realm"
  end
  local users = {}
  if a.users ~= nil then
    if type(a.users) ~= "table" then
      return nil, "auth: users must be an array"
    end
    for _, u in ipairs(a.users) do
      if type(u) ~= "table" or type(u.name) ~= "string" or type(u.hash) ~= "string" or u.hash == "" then
        return nil, "auth: invalid user"
      end
      if users[u.name] == nil then
        users[u.name] = u.hash
      end
    end
  end
  if a.digest == true then
    for _, h in pairs(users) do
      if not str_find(h, "^%x+$") or #h ~= 32 then
        return nil, "auth: invalid digest hash"
      end
    end
    return { digest = true, realm = a.realm, users = users, satisfy_any = a.satisfyAny == true }
  end
  if not libcrypt then
    ngx.log(ngx.WARN, "libcrypt.so.1 not loaded: crypt hashes (bcrypt, $1$, $5$, $6$, DES) never match")
  end
  return { header = 'Basic realm="' .. a.realm .. '"', users = users, satisfy_any = a.satisfyAny == true }
end

-- credentials returns the user and password of a Basic Authorization
-- header, or nil.
local function credentials(h)
  if not h or #h < 7 or str_sub(h, 1, 6):lower() ~= "basic " then
    return nil
  end
  local raw = decode_base64((h:gsub("^%s*%S+%s+", "")))
  if not raw then
    return nil
  end
  local colon = str_find(raw, ":", 1, true)
  if not colon then
    return nil
  end
  return str_sub(raw, 1, colon - 1), str_sub(raw, colon + 1)
end

-- check answers 401 (or 503 for an unavailable auth) unless the request
-- carries the credentials of one of the route's users; it returns the
-- status to answer, or nil to go on.
function _M.check(a)
  if a.unavailable then
    return 503
  end
  if a.digest then
    return digest.check(a)
  end
  local h = var_get("http_authorization")
  local user, pw = credentials(h)
  local hash = user and a.users[user]
  if hash then
    local key = sha1_bin(h)
    if cache:get(key) == hash then
      return nil
    end
    if verify(pw, hash) then
      cache:set(key, hash)
      return nil
    end
  end
  ngx.header["WWW-Authenticate"] = a.header
  return 401
end

return _M
