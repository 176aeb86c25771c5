package egress

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// errCapped stops a copy at the run's byte cap.
var errCapped = errors.New("egress byte cap reached")

// meter counts one request's bytes each way and charges them to the run's
// cap before they are passed on: a chunk that would pass the cap is never
// sent, and the request is cut.
type meter struct {
	p        *Policy
	up, down atomic.Int64
	capped   atomic.Bool
}

// counted charges every write to the cap and to n.
type counted struct {
	w io.Writer
	m *meter
	n *atomic.Int64
}

func (c counted) Write(b []byte) (int, error) {
	if !c.m.p.charge(int64(len(b))) {
		c.m.capped.Store(true)
		return 0, errCapped
	}
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	return n, err
}

// relay carries a tunnel both ways until both ends are done, or the cap
// cuts it: then both connections close. first is what the client sent
// after its request head; open judges its opening before any of it goes
// to the target (the target's bytes flow at once, so a protocol where the
// server speaks first still opens), and returns the reader to carry, or why
// the tunnel is refused: then both connections close and relay returns it.
func (m *meter) relay(target, client net.Conn, first io.Reader, open func(io.Reader) (io.Reader, string)) (refused string) {
	var wg sync.WaitGroup
	// half carries one direction; at the cap it cuts both.
	half := func(dst net.Conn, src io.Reader, n *atomic.Int64) {
		_, err := io.Copy(counted{dst, m, n}, src)
		if errors.Is(err, errCapped) {
			target.Close()
			client.Close()
			return
		}
		closeWrite(dst)
	}
	wg.Go(func() {
		src, why := open(first)
		if why != "" {
			refused = why
			target.Close()
			client.Close()
			return
		}
		half(target, src, &m.up)
	})
	wg.Go(func() { half(client, target, &m.down) })
	wg.Wait()
	return refused
}

// request sends one plain-HTTP request to target and the whole response
// back to the client, as the target wrote it.
func (m *meter) request(target, client net.Conn, req *http.Request) {
	if err := req.Write(counted{target, m, &m.up}); err != nil {
		if !m.capped.Load() {
			writeStatus(client, http.StatusBadGateway, "sending the request: "+err.Error())
		}
		return
	}
	_, _ = io.Copy(counted{client, m, &m.down}, target)
}

// closeWrite half-closes c, so that its peer reads end-of-file while the
// other direction goes on.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	c.Close()
}
