package egress

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
)

// ForwarderName is the name fixrail's binary is mounted under inside the
// sandbox. Run as that (argv[0]'s base name), fixrail is the forwarder
// instead of its CLI: MaybeForward, called first thing in main, checks.
const ForwarderName = "fixrail-egress-forward"

// ListenAddr is where the forwarder listens inside the sandbox: the
// sandbox's own loopback, in a network namespace nothing else shares.
const ListenAddr = "127.0.0.1:3128"

// ForwardArgs is the argv that runs cmd behind the forwarder: bin is where
// fixrail's binary is mounted (its base name ForwarderName), socket where
// the proxy's socket is.
func ForwardArgs(bin, socket string, cmd []string) []string {
	return append([]string{bin, "-socket", socket, "-listen", ListenAddr, "--"}, cmd...)
}

// MaybeForward runs the forwarder and exits when this process was started
// as it, and returns otherwise.
func MaybeForward() {
	if filepath.Base(os.Args[0]) == ForwarderName {
		os.Exit(Forward(os.Args[1:], os.Stderr))
	}
}

// Forward is the forwarder: it listens on the loopback address, relays
// every connection to the proxy's Unix socket, and runs the command (its
// stdio and environment passed on) as its child, exiting as the child
// did — 128+n for a child a signal ended, as bubblewrap reports one. The
// forwarder is a convenience inside the sandbox, not a control: the proxy
// outside decides.
func Forward(args []string, stderr io.Writer) int {
	var socket, listen string
	for len(args) > 0 && args[0] != "--" {
		if len(args) < 2 {
			break
		}
		switch args[0] {
		case "-socket":
			socket = args[1]
		case "-listen":
			listen = args[1]
		default:
			fmt.Fprintf(stderr, "%s: unknown flag %q\n", ForwarderName, args[0])
			return 125
		}
		args = args[2:]
	}
	if len(args) < 2 || args[0] != "--" || socket == "" || listen == "" {
		fmt.Fprintf(stderr, "usage: %s -socket PATH -listen ADDR -- COMMAND...\n", ForwarderName)
		return 125
	}
	cmdArgs := args[1:]
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", ForwarderName, err)
		return 125
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			go relayTo(c, socket)
		}
	}()

	cmd := exec.Command(cmdArgs[0], cmdArgs[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if cmd.Err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", ForwarderName, cmd.Err)
		return 127
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", ForwarderName, err)
		return 127
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	_ = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// relayTo carries one loopback connection to the proxy's socket, bytes
// unchanged both ways.
func relayTo(c net.Conn, socket string) {
	defer c.Close()
	up, err := net.Dial("unix", socket)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); closeWrite(up); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); closeWrite(c); done <- struct{}{} }()
	<-done
	<-done
}
