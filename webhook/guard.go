package webhook

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// Resolver looks up a host's addresses (*net.Resolver is one).
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

var defaultResolver Resolver = net.DefaultResolver

// lookupTimeout bounds the DNS lookup of a registration.
const lookupTimeout = 5 * time.Second

// blocked are the networks a receiver may not be on (besides loopback,
// private, link-local, multicast and unspecified addresses, which netip
// names): "this network", carrier-grade NAT, the IETF protocol block,
// the documentation and benchmark ranges, the old 6to4 relay, reserved
// space and broadcast, NAT64 and 6to4 prefixes that embed an IPv4
// address, the deprecated IPv4-compatible IPv6 addresses (::a.b.c.d),
// the deprecated site-local unicast block, and Teredo (whose addresses
// embed an IPv4 server and client).
var blocked = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4",
		"64:ff9b::/96", "64:ff9b:1::/48", "2002::/16", "2001:db8::/32", "100::/64",
		"::/96", "fec0::/10", "2001::/32",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// Private reports whether a receiver at addr could reach quire's own
// machine or network: loopback, private, link-local (the cloud metadata
// address 169.254.169.254 among them), multicast, unspecified, or one of
// the blocked ranges. An IPv4 address mapped into IPv6 is judged as IPv4.
func Private(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsValid() || addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() ||
		addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast() || addr.IsMulticast() || addr.IsUnspecified() {
		return true
	}
	for _, p := range blocked {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// checkHost returns why u's host may not receive webhooks ("" when it
// may): every address it resolves to must be public.
func checkHost(ctx context.Context, r Resolver, u *url.URL) string {
	host := u.Hostname()
	if addr, err := netip.ParseAddr(host); err == nil {
		if Private(addr) {
			return "must not be a loopback, private or link-local address (see --webhooks-allow-private)"
		}
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	addrs, err := r.LookupIPAddr(ctx, host)
	if err != nil || len(addrs) == 0 {
		return "names a host that does not resolve"
	}
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok || Private(ip) {
			return "resolves to a loopback, private or link-local address (see --webhooks-allow-private)"
		}
	}
	return ""
}

// errPrivate is the refusal of a connection to a private address.
var errPrivate = errors.New("refused: the receiver resolves to a loopback, private or link-local address")

// guardedControl refuses, at the moment of connecting, an address that is
// private: the check of registration again, after whatever DNS answered
// since.
func guardedControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return errPrivate
	}
	if Private(ap.Addr()) {
		return errPrivate
	}
	return nil
}
