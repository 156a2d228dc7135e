package main

import (
	"fmt"
	"os"

	"github.com/msgload/msgload/attack/internal/benchload"
)

func main() {
	if err := benchload.Main(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchload:", err)
		os.Exit(1)
	}
}
