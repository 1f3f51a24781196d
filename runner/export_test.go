package runner

import (
	"context"
	"strings"
	"sync"

	"github.com/baton-dev/baton/llm"
)

// SetCrashHook makes f run at the points where a process dying would leave
// a half-done record; a test panics there to play the crash.
func SetCrashHook(f func(point string)) (restore func()) {
	crashHook = f
	return func() { crashHook = nil }
}

// BlockTool makes the first call of tool whose input holds match wait
// until release is closed, ignoring its context as a slow file operation
// would; started is closed when it begins. Released after its run was
// cancelled, it does nothing, as if the process had died in it.
func BlockTool(tool, match string, started, release chan struct{}) (restore func()) {
	prev := runToolCall
	var once sync.Once
	runToolCall = func(e *toolEnv, ctx context.Context, c llm.ToolCall) toolOutcome {
		first := false
		if c.Name == tool && strings.Contains(string(c.Input), match) {
			once.Do(func() { first = true })
		}
		if first {
			close(started)
			<-release
			if ctx.Err() != nil {
				return toolOutcome{}
			}
		}
		return prev(e, ctx, c)
	}
	return func() { runToolCall = prev }
}
