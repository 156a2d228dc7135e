package testnet

import (
	"net"
	"testing"
)

// FreeAddr returns a loopback address whose port was free a moment ago, for
// a program or command that binds it itself.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
