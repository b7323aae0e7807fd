package kafkatest

import "syscall"

// Pause stops the node's JVM with SIGSTOP, as a hung process (a stuck VM, a long GC
// pause) looks: its sockets stay open and accept connections, nothing answers. Resume
// undoes it; Stop and Kill work on a paused node too.
func (n *Node) Pause() { n.signal(syscall.SIGSTOP) }

// Resume continues a paused node (SIGCONT).
func (n *Node) Resume() { n.signal(syscall.SIGCONT) }

func (n *Node) signal(sig syscall.Signal) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		syscall.Kill(-n.cmd.Process.Pid, sig)
	}
}
