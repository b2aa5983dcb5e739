package ingress

// Digest auth users (auth-type digest). The auth_digest module that
// ingress-nginx builds in reads an htdigest file (Apache's htdigest
// format): one "user:realm:HA1" a line, HA1 the hex MD5 of
// "user:realm:password". A user signs in only with a line of the realm the
// location challenges with (auth-realm); lines of other realms are kept
// out of the route data.
