package runner

// SetCrashHook makes f run at the points where a process dying would leave
// a half-done record; a test panics there to play the crash.
func SetCrashHook(f func(point string)) (restore func()) {
	crashHook = f
	return func() { crashHook = nil }
}
