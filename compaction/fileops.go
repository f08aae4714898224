package compaction

import (
	"slices"
	"strings"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/jsjson"
)

// FileOps are the paths the read, write and edit tool calls named, each
// set in the order first seen (pi's FileOperations).
type FileOps struct {
	Read    []string `json:"read"`
	Written []string `json:"written"`
	Edited  []string `json:"edited"`
}

func addPath(set *[]string, path string) {
	if !slices.Contains(*set, path) {
		*set = append(*set, path)
	}
}

// ExtractFileOps adds the paths of an assistant message's read, write and
// edit calls to ops (pi's extractFileOpsFromMessage). Only a non-empty
// string "path" argument counts.
func ExtractFileOps(m agent.Message, ops *FileOps) {
	if m.Role != agent.RoleAssistant {
		return
	}
	for _, c := range m.Content {
		if c.Type != agent.ContentToolCall {
			continue
		}
		path, _ := c.Arguments["path"].(string)
		if path == "" {
			continue
		}
		switch c.Name {
		case "read":
			addPath(&ops.Read, path)
		case "write":
			addPath(&ops.Written, path)
		case "edit":
			addPath(&ops.Edited, path)
		}
	}
}

// ComputeFileLists turns ops into the sorted lists a summary ends with:
// files only read, and files written or edited (pi's computeFileLists).
// Sorting is JavaScript's, by UTF-16 code units.
func ComputeFileLists(ops FileOps) agent.CompactionDetails {
	modified := slices.Concat(ops.Edited, ops.Written)
	readOnly := []string{}
	for _, f := range ops.Read {
		if !slices.Contains(modified, f) {
			readOnly = append(readOnly, f)
		}
	}
	slices.SortFunc(readOnly, jsjson.CompareUTF16)
	modified = slices.Compact(slices.SortedFunc(slices.Values(modified), jsjson.CompareUTF16))
	if modified == nil {
		modified = []string{}
	}
	return agent.CompactionDetails{ReadFiles: readOnly, ModifiedFiles: modified}
}

// FormatFileOperations is the text appended to a summary: the lists in
// <read-files> and <modified-files> tags, or nothing when both are empty
// (pi's formatFileOperations).
func FormatFileOperations(d agent.CompactionDetails) string {
	var sections []string
	if len(d.ReadFiles) > 0 {
		sections = append(sections, "<read-files>\n"+strings.Join(d.ReadFiles, "\n")+"\n</read-files>")
	}
	if len(d.ModifiedFiles) > 0 {
		sections = append(sections, "<modified-files>\n"+strings.Join(d.ModifiedFiles, "\n")+"\n</modified-files>")
	}
	if len(sections) == 0 {
		return ""
	}
	return "\n\n" + strings.Join(sections, "\n\n")
}
