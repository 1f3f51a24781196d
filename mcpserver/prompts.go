package mcpserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/skill"
)

// addSkillPrompts offers every skill of the library as a prompt of the
// same name, so that a host's user can pick one (a slash command in most
// hosts) and have the host's own model work the way a baton sub-agent
// with that skill would.
func (s *Server) addSkillPrompts() {
	for _, sk := range s.skills.List() {
		s.mcp.AddPrompt(&mcp.Prompt{Name: sk.Name, Description: sk.Description,
			Arguments: []*mcp.PromptArgument{{Name: "task", Description: "the task to work on with this skill; appended after the skill's instructions"}}},
			skillPrompt(sk))
	}
}

// skillPrompt returns the skill's body as one user message, the task after
// it when one is given. The skill is bound when the prompt is added: the
// library does not change while the server runs.
func skillPrompt(sk *skill.Skill) mcp.PromptHandler {
	return func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		text := sk.Body
		if task := strings.TrimSpace(req.Params.Arguments["task"]); task != "" {
			text += "\n\nTask: " + task
		}
		return &mcp.GetPromptResult{Description: sk.Description,
			Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
	}
}
