// Package egress decides where the service may send a request that
// someone else chose the address of: a webhook receiver's URL. Such a URL
// must not make the worker a proxy into its own network (SSRF), so
// loopback, link-local (which holds the clouds' metadata services),
// private, shared, multicast and unspecified addresses are refused, as
// names resolve at the moment of sending: a name that resolved to a public
// address at registration cannot be turned to an internal one later, since
// the connection goes to the very address that was checked. Loopback may
// be allowed, for a receiver on the same machine in development; the rest
// never is. Redirects are not followed, and no proxy from the environment
// is used.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"
)

// Resolver resolves host names; net.DefaultResolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard holds the rule and the network it is applied to.
type Guard struct {
	// AllowLoopback lets requests go to 127.0.0.0/8 and ::1 (the dev
	// stack's local receiver). Nothing else internal is ever allowed.
	AllowLoopback bool
	// Resolver and Dial are the network; nil means the system's. Tests
	// stub both, so that no packet leaves loopback.
	Resolver Resolver
	Dial     func(ctx context.Context, network, address string) (net.Conn, error)
}

// RefusedError is an address the guard will not send to.
type RefusedError struct {
	Host string
	Addr netip.Addr
	Why  string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s resolves to %s, a %s address: refused", e.Host, e.Addr, e.Why)
}

// metadata are the cloud metadata services outside link-local: AWS's
// IPv6 endpoint and Alibaba's.
var metadata = []netip.Prefix{netip.MustParsePrefix("fd00:ec2::254/128"), netip.MustParsePrefix("100.100.100.200/32")}

// special are the blocks of IANA's special-purpose address registries
// (IPv4 and IPv6) whose "Globally Reachable" column says false, and that
// Go's predicates (private, loopback, link-local, multicast, unspecified)
// do not already name; with two the registries mark reachable but that
// embed an IPv4 address a translator would reach into the network: NAT64
// (64:ff9b::/96) and 6to4 (2002::/16). The registries' few reachable
// exceptions inside 2001::/23 are anycast services, not receivers.
var special = []netip.Prefix{
	// IPv4: "this network", shared address space (RFC 6598), IETF protocol
	// assignments, the three documentation blocks, benchmarking, reserved.
	netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("100.64.0.0/10"), netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("240.0.0.0/4"),
	// IPv6: discard-only and the dummy prefix, IETF protocol assignments
	// (TEREDO, benchmarking, ORCHID), documentation (RFC 3849, RFC 9637),
	// SRv6 SIDs; NAT64 and 6to4.
	netip.MustParsePrefix("100::/64"), netip.MustParsePrefix("100:0:0:1::/64"), netip.MustParsePrefix("2001::/23"),
	netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("3fff::/20"), netip.MustParsePrefix("5f00::/16"),
	netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("64:ff9b:1::/48"), netip.MustParsePrefix("2002::/16"),
}

// check says why addr is refused, or "" when it is allowed.
func (g *Guard) check(addr netip.Addr) string {
	addr = addr.Unmap() // ::ffff:10.0.0.1 is 10.0.0.1
	for _, p := range metadata {
		if p.Contains(addr) {
			return "cloud metadata"
		}
	}
	switch {
	case addr.IsLoopback():
		if g.AllowLoopback {
			return ""
		}
		return "loopback"
	case addr.IsLinkLocalUnicast(), addr.IsLinkLocalMulticast():
		return "link-local (cloud metadata)"
	case addr.IsPrivate():
		return "private"
	case addr.IsUnspecified(), addr.IsMulticast(), addr.IsInterfaceLocalMulticast():
		return "non-unicast"
	case !addr.IsGlobalUnicast():
		return "non-routable"
	}
	for _, p := range special {
		if p.Contains(addr) {
			return "special-purpose"
		}
	}
	return ""
}

// CheckURL reads a receiver's URL at registration: absolute http or
// https, and every address its host resolves to now allowed.
func (g *Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" {
		return errors.New("url must be an absolute http or https URL")
	}
	if u.User != nil {
		return errors.New("url must not carry credentials")
	}
	_, err = g.resolve(ctx, u.Hostname())
	return err
}

// CheckHost reads a host the service will connect to (an agency's SMTP
// server): every address it resolves to now allowed.
func (g *Guard) CheckHost(ctx context.Context, host string) error {
	_, err := g.resolve(ctx, host)
	return err
}

// resolve returns host's addresses if every one is allowed.
func (g *Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		r := g.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		if addrs, err = r.LookupNetIP(ctx, "ip", host); err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no address", host)
	}
	for _, a := range addrs {
		if why := g.check(a); why != "" {
			return nil, &RefusedError{Host: host, Addr: a, Why: why}
		}
	}
	return addrs, nil
}

// dial resolves address's host, refuses it unless every address is
// allowed, and connects to the first that answers: to the checked
// address itself, so DNS cannot swap it between the check and the
// connection.
func (g *Guard) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	dial := g.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	}
	var errs []error
	for _, a := range addrs {
		conn, err := dial(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// Client is an HTTP client that sends only where the guard allows, does
// not follow redirects (a 3xx is the receiver's answer), and ignores any
// proxy set in the environment.
func (g *Guard) Client(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:         g.dial,
			TLSHandshakeTimeout: timeout,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     time.Minute,
			ForceAttemptHTTP2:   true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
