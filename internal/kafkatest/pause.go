package kafkatest

import "syscall"

// Pause stops the node's JVM with SIGSTOP: it keeps its sockets and answers nothing,
// the way a hung process, a stuck VM or a long GC pause looks to its clients. Resume
// lets it go on; a paused node must be resumed before Stop, which would otherwise wait
// its full grace period.
func (n *Node) Pause() { n.signal(syscall.SIGSTOP) }

// Resume continues a node stopped by Pause (SIGCONT).
func (n *Node) Resume() { n.signal(syscall.SIGCONT) }

func (n *Node) signal(sig syscall.Signal) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		syscall.Kill(-n.cmd.Process.Pid, sig)
	}
}
