package config

// canonical writes ga; nothing when empty (see externalAuth).
func (ga *GlobalAuth) canonical(w *canonicalWriter) {
	if *ga == (GlobalAuth{}) {
		return
	}
	w.bool(true)
	for _, s := range []string{ga.URL, ga.Method, ga.Signin, ga.SigninRedirectParam, ga.ResponseHeaders,
		ga.RequestRedirect, ga.CacheKey, ga.CacheDuration, ga.AlwaysSetCookie, ga.NoAuthLocations} {
		w.str(s)
	}
	w.bool(ga.NoAuthLocationsSet)
}

// externalAuth writes a; nothing when nil, so that the checksums of
// Configurations without external auth stay as they were.
func (w *canonicalWriter) externalAuth(a *ExternalAuth) {
	if a == nil {
		return
	}
	w.bool(true)
	for _, s := range []string{a.URL, a.Host, a.Method, a.Signin, a.RequestRedirect, a.CacheKey} {
		w.str(s)
	}
	w.strs(a.ResponseHeaders)
	w.uint(uint64(len(a.CacheDurations)))
	for _, d := range a.CacheDurations {
		w.int(d.Millis)
		w.uint(uint64(len(d.Codes)))
		for _, c := range d.Codes {
			w.int(int64(c))
		}
	}
	w.headers(a.ProxySetHeaders)
	w.bool(a.AlwaysSetCookie)
	w.bool(a.SatisfyAny)
	w.bool(a.Unavailable)
}

func (w *canonicalWriter) rateLimit(r *RateLimit) {
	w.bool(r != nil)
	if r == nil {
		return
	}
	for _, n := range []int64{int64(r.RPS), int64(r.RPM), int64(r.BurstMultiplier), int64(r.Connections),
		r.Rate, r.RateAfter, int64(r.ReqStatus), int64(r.ConnStatus)} {
		w.int(n)
	}
	w.strs(r.Allowlist)
	w.bool(r.Invalid)
}

// proxySSL writes a location's ProxySSL for the checksum.
func (w *canonicalWriter) proxySSL(p *ProxySSL) {
	w.bool(p != nil)
	if p != nil {
		w.str(p.Profile)
		w.str(p.Name)
		w.bool(p.Unavailable)
	}
}

// upstreamTLS writes the profiles for the checksum (their Names are hashes
// of their content).
func (w *canonicalWriter) upstreamTLS(list []UpstreamTLS) {
	w.uint(uint64(len(list)))
	for i := range list {
		w.str(list[i].Name)
	}
}

// headers writes a header list for the checksum.
func (w *canonicalWriter) headers(hs []Header) {
	w.uint(uint64(len(hs)))
	for _, h := range hs {
		w.str(h.Name)
		w.str(h.Value)
	}
}

// clientAuth encodes a Server's ClientAuth for its checksum; nil writes
// nothing (so that the checksums of Servers without one stay as they
// were): the Server's next field is a length whose first byte is 0, the
// tag's first byte is its length.
func (w *canonicalWriter) clientAuth(c *ClientAuth) {
	if c == nil {
		return
	}
	w.str("clientAuth")
	w.str(c.Ingress)
	w.str(c.Secret)
	w.str(c.CA)
	w.strs(c.Revoked)
	w.str(c.Verify)
	w.uint(uint64(c.Depth))
	w.str(c.ErrorPage)
	w.bool(c.PassCertificate)
	w.str(c.MatchCN)
}

// clientAuthClosed encodes LocationSettings.ClientAuthUnavailable; false
// writes nothing (the canary that follows starts with a 0 or 1 byte).
func (w *canonicalWriter) clientAuthClosed(closed bool) {
	if closed {
		w.str("clientAuthUnavailable")
	}
}

// canary writes c into a Location's checksum: nothing when nil, so that
// Locations without a canary keep their encoding; else a marker that no
// path (starting with '/') nor hostname can start with, then the fields.
func (w *canonicalWriter) canary(c *Canary) {
	if c == nil {
		return
	}
	w.str("+canary")
	w.str(c.Backend)
	w.str(c.Ingress)
	w.int(int64(c.Weight))
	w.int(int64(c.WeightTotal))
	w.str(c.Header)
	w.str(c.HeaderValue)
	w.str(c.HeaderPattern)
	w.str(c.Cookie)
}

// canonical writes every field of g for the checksum.
func (g *Global) canonical(w *canonicalWriter) {
	w.bool(g.SSLRedirect)
	w.int(int64(g.ProxyConnectTimeout))
	w.int(int64(g.ProxyReadTimeout))
	w.int(int64(g.ProxySendTimeout))
	w.str(string(g.ProxyBodySize))
	w.int(int64(g.UpstreamKeepalive))
	w.bool(g.UseForwardedHeaders)
	w.bool(g.AllowSnippets)
	w.int(g.ServerNamesHashMaxKB)
	w.bool(g.ForceSSLRedirect)
	w.str(g.ProxySetHeaders)
	w.str(g.AddHeaders)
	w.str(g.AllowedResponseHeaders)
	w.bool(g.ServiceUpstream)
	w.str(g.CustomHTTPErrors)
	w.str(g.LoadBalance)
	w.int(int64(g.LimitReqStatusCode))
	w.int(int64(g.LimitConnStatusCode))
	w.int(g.LimitRate)
	w.int(g.LimitRateAfter)
	w.str(g.NoTLSRedirectLocations)
	w.proxySettings(&g.Proxy)
	w.str(g.AllowSourceRange)
	w.str(g.DenySourceRange)
	w.str(g.BlockUserAgents)
	w.str(g.BlockReferers)
	w.str(g.BlockCIDRs)
	g.Auth.canonical(w)
	w.bool(g.ProxySSLLocationOnly)
	w.globalModSecurity(&g.ModSecurity)
	n := &g.Nginx
	for _, b := range []bool{n.UseGzip, n.SSLSessionCache, n.SSLSessionTickets,
		n.ProxyBuffering, n.UseHTTP2, n.LogFormatEscapeJSON, n.LogFormatEscapeNone, n.ServerTokens, n.HSTS, n.HSTSIncludeSubdomains, n.HSTSPreload,
		n.UseProxyProtocol, n.EnableRealIP, n.ComputeFullForwardedFor, n.GenerateRequestID, n.ProxyAddOriginalURIHeader,
		n.AllowBackendServerHeader, n.RelativeRedirects} {
		w.bool(b)
	}
	for _, i := range []int{n.HTTPRedirectCode, n.ProxyBuffersNumber, n.ProxyNextUpstreamTimeout, n.GRPCBufferSizeKB, n.UpstreamKeepaliveTime, n.GzipLevel, n.GzipMinLength, n.SSLSessionTimeout, n.KeepAlive, n.KeepAliveRequests,
		n.UpstreamKeepaliveTimeout, n.UpstreamKeepaliveRequests, n.ClientHeaderTimeout, n.ClientBodyTimeout,
		n.LargeClientHeaderBuffers, n.HTTP2MaxConcurrentStreams, n.MaxWorkerConnections, n.WorkerShutdownTimeout, n.HSTSMaxAge} {
		w.int(int64(i))
	}
	for _, s := range []string{n.GzipDisable, string(n.ProxyBusyBuffersSize), string(n.ClientBodyBufferSize), n.HideHeaders, n.GzipTypes, n.SSLProtocols, n.SSLCiphers, string(n.SSLSessionCacheSize),
		string(n.ClientHeaderBufferSize), string(n.LargeClientHeaderBufferSize), string(n.ProxyBufferSize),
		n.LogFormatUpstream, n.ErrorLogLevel, n.WorkerProcesses, n.ForwardedForHeader, n.ProxyRealIPCIDR} {
		w.str(s)
	}
	// Only when set, so that the checksums of configurations without them
	// stay as they were.
	if n.ProxyStreamTimeout != 600 || n.ProxyStreamResponses != 1 || n.ProxyProtocolHeaderTimeout != 5 || n.LogFormatStream != "" || n.StreamAccessLogPath != "" {
		w.str("stream")
		w.int(int64(n.ProxyProtocolHeaderTimeout))
		w.int(int64(n.ProxyStreamTimeout))
		w.int(int64(n.ProxyStreamResponses))
		w.str(n.LogFormatStream)
		w.str(n.StreamAccessLogPath)
	}
	if n.DisableAccessLog || n.AccessLogPath != "" {
		w.str("access-log")
		w.bool(n.DisableAccessLog)
		w.str(n.AccessLogPath)
	}
	n.canonicalModules(w)
	g.OpenTelemetry.canonical(w)
}

// match writes a Location's Match: nothing when nil (Locations without
// one keep their encoding), else a marker that no path nor canary marker
// starts with, then the fields.
func (w *canonicalWriter) match(m *Match) {
	if m == nil {
		return
	}
	w.str("+match")
	w.str(m.Method)
	for _, list := range [2][]MatchValue{m.Headers, m.Query} {
		w.uint(uint64(len(list)))
		for _, v := range list {
			w.str(v.Name)
			w.str(v.Value)
			w.bool(v.Regex)
		}
	}
}

// filters writes a Location's Filters: nothing when nil, else a marker
// as match does, then the fields.
func (w *canonicalWriter) filters(f *Filters) {
	if f == nil {
		return
	}
	w.str("+filters")
	for _, h := range []*HeaderFilter{f.RequestHeaders, f.ResponseHeaders} {
		w.bool(h != nil)
		if h != nil {
			w.headerFilter(h)
		}
	}
	w.bool(f.Redirect != nil)
	if r := f.Redirect; r != nil {
		w.str(r.Scheme)
		w.str(r.Hostname)
		w.int(int64(r.Port))
		w.pathModifier(r.Path)
		w.int(int64(r.Code))
	}
	w.str(f.RewriteHost)
	w.pathModifier(f.RewritePath)
	w.bool(f.CORS != nil)
	if c := f.CORS; c != nil {
		w.strs(c.AllowOrigins)
		w.strs(c.AllowMethods)
		w.strs(c.AllowHeaders)
		w.strs(c.ExposeHeaders)
		w.bool(c.AllowCredentials)
		w.int(int64(c.MaxAge))
	}
}

func (w *canonicalWriter) headerFilter(h *HeaderFilter) {
	w.headers(h.Set)
	w.headers(h.Add)
	w.strs(h.Remove)
}

func (w *canonicalWriter) pathModifier(p *PathModifier) {
	w.bool(p != nil)
	if p != nil {
		w.str(p.Type)
		w.str(p.Value)
	}
}

// weighted writes a Location's Backends: nothing when empty, else a
// marker as match does, then the backends.
func (w *canonicalWriter) weighted(bs []WeightedBackend) {
	if len(bs) == 0 {
		return
	}
	w.str("+backends")
	w.uint(uint64(len(bs)))
	for _, b := range bs {
		w.str(b.Backend)
		w.int(int64(b.Weight))
		if h := b.RequestHeaders; h != nil { // optional, as the parts above
			w.str("+requestHeaders")
			w.headerFilter(h)
		}
	}
}

// timeouts writes a Location's Timeouts: nothing when nil, else a marker
// as match does, then the fields.
func (w *canonicalWriter) timeouts(t *Timeouts) {
	if t == nil {
		return
	}
	w.str("+timeouts")
	w.int(int64(t.RequestMillis))
	w.int(int64(t.BackendRequestMillis))
}

// mirrors writes a Location's Mirrors: nothing when empty, else a marker
// as match does, then the mirrors.
func (w *canonicalWriter) mirrors(ms []Mirror) {
	if len(ms) == 0 {
		return
	}
	w.str("+mirrors")
	w.uint(uint64(len(ms)))
	for i := range ms {
		m := &ms[i]
		w.str(m.Backend)
		w.str(m.URL)
		w.str(m.Host)
		w.bool(m.Body)
		w.int(int64(m.Numerator))
		w.int(int64(m.Denominator))
	}
}
