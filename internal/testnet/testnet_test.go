package testnet

import (
	"net"
	"testing"
)

func TestFreeAddrCanBeBound(t *testing.T) {
	addr := FreeAddr(t)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("FreeAddr gave %s, which cannot be bound: %v", addr, err)
	}
	ln.Close()
	if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
		t.Errorf("FreeAddr gave %s, not a loopback address", addr)
	}
}
