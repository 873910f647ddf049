package carry

import (
	"io"
	"net"
	"sync"
)

// Serve carries every connection ln accepts to one dial makes, both ways,
// until ln is closed.
func Serve(ln net.Listener, dial func() (net.Conn, error)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer func() { _ = c.Close() }()
			d, err := dial()
			if err != nil {
				return
			}
			defer func() { _ = d.Close() }()
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(d, c); closeWrite(d) }()
			go func() { defer wg.Done(); _, _ = io.Copy(c, d); closeWrite(c) }()
			wg.Wait()
		}()
	}
}

// closeWrite half-closes a connection, so that the other side sees the end.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}
