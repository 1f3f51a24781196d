package orchestrate

import (
	"slices"
	"testing"
)

// TestTasksListsEveryEnqueuedTask: the registry a worker and a coordinator
// register holds every task name an ask enqueues, each with a task.
func TestTasksListsEveryEnqueuedTask(t *testing.T) {
	tasks := Tasks(nil, nil)
	var names []string
	for name, task := range tasks {
		if task == nil {
			t.Errorf("task %q is nil", name)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	if want := []string{CallTask, SubagentTask}; !slices.Equal(names, want) {
		t.Errorf("tasks %v, want %v", names, want)
	}
}
