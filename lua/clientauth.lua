-- clientauth.lua: client certificate authentication of a host
-- (auth-tls-*), as nginx's ssl_verify_client in a server of its own, in
-- the one SSL context of the public server.
--
-- A host's clientAuth = {ca, verify, depth, errorPage, passCertificate,
-- matchCN, revoked}.
--
-- Handshake (certificate.lua): in ssl_client_hello_by_lua, bind() sets the
-- session id context of a connection whose SNI host verifies clients to
-- "isync:" .. SHA-1(host name, CA, verify, depth): OpenSSL resumes a session (session
-- cache or ticket) only in the context it was made in, so a session made
-- for another SNI, or before the host's CA changed, is never resumed
-- there: a full handshake verifies the client again. In
-- ssl_certificate_by_lua, verify() asks for a client certificate and
-- verifies it against the CA (ngx.ssl.verify_client; the handshake never
-- fails on a bad certificate, as nginx's).
--
-- Request (router.lua, check()): the session's context must be the Host
-- header's host's: otherwise the connection was verified for another host
-- (421 Misdirected Request, as nginx between servers that differ in
-- ssl_verify_client), unless the client sent no SNI and nothing was
-- verified (then as without a certificate). Then nginx's answers: 400 for
-- no certificate (on) or a failed verification (on, optional; for
-- optional_no_ca only an untrusted issuer passes), or the error page; 403
-- when the subject DN does not match matchCN; the ssl-client-* headers
-- upstream.

local ffi = require("ffi")
local base = require("resty.core.base")
local ssl = require("ngx.ssl")

local C = ffi.C
local ngx = ngx
local var_get = require("nvar").get
local re_find = ngx.re.find
local get_request = base.get_request
local str_sub = string.sub
local type = type

for _, decl in ipairs({
  "void *ngx_http_lua_ffi_get_req_ssl_pointer(void *r);",
  "int SSL_set_session_id_context(void *ssl, const unsigned char *ctx, unsigned int len);",
  "void *SSL_get_session(const void *ssl);",
  "const unsigned char *SSL_SESSION_get0_id_context(const void *s, unsigned int *len);",
  "long SSL_get_verify_result(const void *ssl);",
}) do
  pcall(ffi.cdef, decl)
end

local _M = {}

local SID_PREFIX = "isync:"
local VERIFY = { on = true, off = true, optional = true, optional_no_ca = true }

-- OPTIONAL_ERRORS are the verification errors optional_no_ca lets pass
-- (nginx's ngx_ssl_verify_error_optional): an issuer that is not trusted.
local OPTIONAL_ERRORS = { [2] = true, [18] = true, [19] = true, [20] = true, [21] = true, [27] = true }

local sid_len = ffi.new("unsigned int[1]")

-- ssl_pointer returns the SSL object of the current connection, or nil.
local function ssl_pointer()
  local r = get_request()
  if not r then
    return nil
  end
  local s = C.ngx_http_lua_ffi_get_req_ssl_pointer(r)
  if s == nil then
    return nil
  end
  return s
end

-- session_context returns the session id context of the connection's
-- session, and its SSL object.
local function session_context()
  local s = ssl_pointer()
  if not s then
    return nil
  end
  local sess = C.SSL_get_session(s)
  if sess == nil then
    return nil, s
  end
  local p = C.SSL_SESSION_get0_id_context(sess, sid_len)
  if p == nil then
    return nil, s
  end
  return ffi.string(p, sid_len[0]), s
end

local function ours(sid)
  return sid ~= nil and str_sub(sid, 1, #SID_PREFIX) == SID_PREFIX
end

local function is_text(v, max)
  return type(v) == "string" and #v > 0 and #v <= max and not v:find("[%c%s\127]")
end

-- compile checks the clientAuth of host name and turns it into what check uses;
-- nil without one.
function _M.compile(c, name)
  if c == nil then
    return nil
  end
  if type(c) ~= "table" then
    return nil, "clientAuth must be an object"
  end
  local depth = c.depth
  if not VERIFY[c.verify] or type(depth) ~= "number" or depth < 1 or depth > 100 or depth % 1 ~= 0 then
    return nil, "clientAuth: invalid verify or depth"
  end
  if type(c.ca) ~= "string" or c.ca == "" then
    return nil, "clientAuth: no CA"
  end
  local chain, err = ssl.parse_pem_cert(c.ca)
  if not chain then
    return nil, "clientAuth: CA: " .. (err or "unparsable")
  end
  local out = { verify = c.verify, depth = depth, chain = chain, pass_cert = c.passCertificate == true }
  if c.verify ~= "off" then
    out.sid = SID_PREFIX .. ngx.sha1_bin(name .. "\n" .. c.ca .. "\n" .. c.verify .. "\n" .. depth)
  end
  local page = c.errorPage
  if page ~= nil then
    if not is_text(page, 2048) or page:find("[?#]") then
      return nil, "clientAuth: invalid errorPage"
    end
    if page:byte(1) == 47 then -- "/": served from the host's routes
      out.page_uri = page
    else
      out.page_url = page
    end
  end
  if c.matchCN ~= nil then
    local _, rerr = type(c.matchCN) == "string" and re_find("", c.matchCN, "jo")
    if type(c.matchCN) ~= "string" or rerr then
      return nil, "clientAuth: invalid matchCN"
    end
    out.match_cn = c.matchCN
  end
  if c.revoked ~= nil then
    if type(c.revoked) ~= "table" then
      return nil, "clientAuth: revoked must be an array"
    end
    out.revoked = {}
    for _, serial in ipairs(c.revoked) do
      if type(serial) ~= "string" or not serial:find("^%x+$") then
        return nil, "clientAuth: invalid revoked serial"
      end
      out.revoked[serial] = true
    end
  end
  return out
end

-- bind runs in ssl_client_hello_by_lua for the SNI's host entry h: the
-- session id context of a host that verifies clients (see the header).
function _M.bind(h)
  local c = h and h.client
  local sid = c and c.sid
  if not sid then
    return
  end
  local s = ssl_pointer()
  if not s or C.SSL_set_session_id_context(s, sid, #sid) ~= 1 then
    ngx.log(ngx.ERR, "cannot set the session id context for ", h.name)
    return ngx.exit(ngx.ERROR)
  end
end

-- verify runs in ssl_certificate_by_lua (full handshakes only) for the
-- SNI's host entry h: it asks for and verifies a client certificate. The
-- session's context must be the one bind set for the same host version
-- (the host may have changed between the two callbacks): otherwise the
-- handshake fails, and the client tries again.
function _M.verify(h)
  local c = h and h.client
  local want = c and c.sid
  local have = session_context()
  if have ~= want and (want or ours(have)) then
    ngx.log(ngx.WARN, "client certificate settings of ", h and h.name or "?", " changed during the handshake")
    return ngx.exit(ngx.ERROR)
  end
  if not want then
    return
  end
  local ok, err = ssl.verify_client(c.chain, c.depth)
  if not ok then
    ngx.log(ngx.ERR, "cannot verify client certificates for ", h.name, ": ", err)
    return ngx.exit(ngx.ERROR)
  end
end

local function set_header(name, v)
  if v ~= nil and v ~= "" then
    ngx.req.set_header(name, v)
  else
    ngx.req.clear_header(name)
  end
end

-- outcome returns the verification result of the request's connection
-- for c ("SUCCESS", "NONE" or "FAILED:..."), its SSL object, and 421 when
-- the connection was verified for another host.
local function outcome(c, tls)
  if not tls then
    return var_get("ssl_client_verify")
  end
  local sid, s = session_context()
  if sid ~= c.sid then
    local sni = var_get("ssl_server_name")
    if (sni ~= nil and sni ~= "") or ours(sid) then
      return nil, nil, 421
    end
    return "NONE" -- no SNI: no certificate was asked for
  end
  local result = var_get("ssl_client_verify")
  if result == "SUCCESS" and c.revoked and c.revoked[var_get("ssl_client_serial") or ""] then
    result = "FAILED:certificate revoked"
  end
  return result, s
end

-- passes applies verify to a result.
local function passes(c, result, s)
  if result == "SUCCESS" then
    return true
  end
  if result == nil or result == "NONE" then
    return c.verify ~= "on"
  end
  return c.verify == "optional_no_ca" and s ~= nil and result ~= "FAILED:certificate revoked"
    and OPTIONAL_ERRORS[tonumber(C.SSL_get_verify_result(s))] == true
end

-- fail answers a failed verification: the error page, else 400. An
-- internal error page (a path) becomes the request's URI (GET, no query),
-- routed by the caller as nginx's error_page internal redirect; it is
-- only served on TLS requests (tls).
local function fail(c, tls)
  if c.page_url then
    return ngx.redirect(c.page_url, 302)
  end
  if c.page_uri and tls then
    ngx.req.set_uri(c.page_uri)
    ngx.req.set_uri_args("")
    if ngx.req.get_method() ~= "HEAD" then
      ngx.req.set_method(ngx.HTTP_GET)
    end
    return
  end
  return ngx.exit(400)
end

-- check enforces c for the request (tls: it came over TLS) and sets the
-- headers upstream; it ends the request when c refuses it.
function _M.check(c, tls)
  local result = var_get("ssl_client_verify")
  if c.sid then
    local s, code
    result, s, code = outcome(c, tls)
    if code then
      return ngx.exit(code)
    end
    if not passes(c, result, s) then
      fail(c, tls) -- returns only for an internal error page
    end
  end
  if c.match_cn and not re_find(var_get("ssl_client_s_dn") or "", c.match_cn, "jo") then
    return ngx.exit(403)
  end
  set_header("ssl-client-verify", result)
  set_header("ssl-client-subject-dn", var_get("ssl_client_s_dn"))
  set_header("ssl-client-issuer-dn", var_get("ssl_client_i_dn"))
  set_header("ssl-client-cert", c.pass_cert and var_get("ssl_client_escaped_cert") or nil)
end

return _M
