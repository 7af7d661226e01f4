package helper

import (
	"runtime"
	"sync"
)

// reserveThreads makes the Go runtime hold n more idle OS threads. Under a
// fork bomb every pid of the sandbox's limit is taken (threads count), and
// a Go program that needs a new thread then dies at once ("failed to
// create new OS thread"): for PID 1 that stops the whole sandbox. Idle
// threads are never given back, so later needs (a goroutine blocked in a
// syscall, a woken P) take one of these instead of cloning.
//
// Each goroutine locks a thread of its own while all n are alive, which
// forces n distinct threads; unlocked, they go to the idle list.
func reserveThreads(n int) {
	var ready, release sync.WaitGroup
	ready.Add(n)
	release.Add(1)
	var done sync.WaitGroup
	done.Add(n)
	for range n {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			ready.Done()
			release.Wait()
			runtime.UnlockOSThread()
		}()
	}
	ready.Wait()
	release.Done()
	done.Wait()
}
