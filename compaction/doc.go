// Package compaction is the deterministic core of context compaction, made
// to equal pi-coding-agent 0.73.1 (dist/core/compaction/compaction.js and
// utils.js) byte for byte: when a session's context needs compacting, where
// to cut it, what the summarizer is sent, and the context that follows. It
// makes no model call and imports no Temporal: the caller (the workflow and
// its CompactContext activity) sends the requests and hands back the answers.
//
// Start with History (the messages and the latest Compaction), then follow
// one compaction:
//
//	u := h.ContextTokens()                          // or CalculateContextTokens(last.Usage)
//	if ShouldCompact(u.Tokens, window, s) {
//		p, err := PrepareCompaction(h, s)           // the cut, what is summarized
//		reqs := BuildRequests(p, opts)              // 1 or 2 llm.Requests
//		text, err := SummaryText(KindHistory, ans)  // per answer
//		a := Apply(h, p, Summaries{History: text}, now)
//		// a.Compaction is the record, a.Context what the next turn is sent
//	}
//
// # What mirrors what in pi
//
//	settings.go   Settings, DefaultSettings, ShouldCompact   CompactionSettings, DEFAULT_COMPACTION_SETTINGS, shouldCompact
//	tokens.go     EstimateTokens                             estimateTokens (chars/4; tool-result images 4800 chars)
//	              CalculateContextTokens                     calculateContextTokens (totalTokens, else the sum)
//	              EstimateContextTokens, ContextUsage        estimateContextTokens, getAssistantUsage (skips error/aborted)
//	history.go    History, Compaction, Details               session entries: messages and the CompactionEntry
//	              History.Context, SummaryMessage            buildSessionContext + convertToLlm, createCompactionSummaryMessage
//	              History.ContextTokens                      estimateContextTokens(buildSessionContext(...).messages)
//	cutpoint.go   FindCutPoint, CutPoint, FindTurnStartIndex findCutPoint, findValidCutPoints, findTurnStartIndex
//	prepare.go    PrepareCompaction, Preparation             prepareCompaction, extractFileOperations
//	              ErrAlreadyCompacted, ErrNothingToCompact   AgentSession.compact()'s refusals
//	fileops.go    FileOps, ExtractFileOps                    createFileOps, extractFileOpsFromMessage
//	              ComputeFileLists, FormatFileOperations     computeFileLists, formatFileOperations
//	serialize.go  SerializeConversation                      serializeConversation, truncateForSummary (2000 chars)
//	prompts.go    SummarizationSystemPrompt, ...Prompt       SUMMARIZATION_SYSTEM_PROMPT, SUMMARIZATION_PROMPT,
//	                                                         UPDATE_SUMMARIZATION_PROMPT, TURN_PREFIX_SUMMARIZATION_PROMPT,
//	              SummaryPrefix, SummarySuffix               COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX
//	summarize.go  BuildRequests, SummaryText                 compact(): generateSummary, generateTurnPrefixSummary
//	apply.go      Apply                                      the rest of compact(), appendCompaction, buildSessionContext
//	js.go         UTF-16 lengths and order, JSON.stringify   what JavaScript does implicitly
//
// pi keeps a tree of session entries with ids; History keeps messages and
// indexes. Earlier compactions than the latest change nothing in pi's
// results, so History holds only the latest.
//
// # Tests against pi
//
// testdata/golden.json.gz holds 150 transcripts made by reference/gen.mjs
// and what pi's own functions made of them; golden_test.go requires Go to
// equal every one (cut points, kept and summarized messages, token
// estimates, file lists, the summarizer's requests byte for byte, the
// summary and the context after). Regenerating needs Node and npm, the tests
// do not: go generate ./compaction.
//
// # Where Go cannot be pi
//
//   - Tool-call arguments are a map in agent.Content, so their key order is
//     lost when a transcript is decoded. JavaScript keeps the model's order;
//     this package writes integer-like keys first, then the rest sorted, which
//     is pi's order only when the model wrote them sorted. It changes the
//     "[Assistant tool calls]" line of a prompt, never a token estimate.
//   - A tool result cut at 2000 UTF-16 units can end in half a surrogate
//     pair. JavaScript sends the lone surrogate (JSON "\ud83d"); a UTF-8
//     string cannot hold one, so Go sends U+FFFD, which is what decoding
//     pi's JSON gives.
//   - Content in the content store (agent.BlobRef stubs) counts as empty
//     text: resolve stubs before estimating or serializing.
//
// # How pi triggers compaction (AgentSession._checkCompaction)
//
// For the workflow integration; none of it is in this package. pi checks
// after agent_end and before a prompt is sent: nothing when disabled, for an
// aborted answer, or for an answer older than the latest compaction (by
// timestamp). An overflow (pi-ai's isContextOverflow: the error patterns of
// llm/errors.go, or a "stop" answer whose input + cacheRead exceeds the
// window, or a "length" answer with no output and input + cacheRead at 99%
// of it) from the same model removes the error answer, compacts with reason
// "overflow" and continues the run, once; a second overflow ends with
// "Context overflow recovery failed after one compact-and-retry attempt.
// Try reducing context or switching to a larger-context model." Otherwise
// context tokens are CalculateContextTokens of the answer's usage (for an
// error answer, EstimateContextTokens of the messages, skipped when that
// usage predates the latest compaction), and ShouldCompact compacts with
// reason "threshold" and no retry. Events: compaction_start {reason},
// compaction_end {reason, result, aborted, willRetry, errorMessage} with
// "Compaction failed: ", "Auto-compaction failed: " or "Context overflow
// recovery failed: " before the error.
//
// # Where pi is wrong
//
// Reproduced here as pi does it; the fixes belong to the workflow.
//
//   - pi #7821: auto-compaction waits for agent_end, so a long tool loop
//     overflows the context first. Check ShouldCompact after every tool
//     batch and turn.
//   - pi #6879: compaction ran only after the provider had overflowed
//     (373K tokens against a 272K window): the threshold is checked against
//     the last answer's usage, after the fact. Check before each model turn
//     too, with the messages added since (EstimateContextTokens does that).
//   - pi #7086: a compaction race lost a turn. Apply takes the history as
//     it is when the summary arrives: messages appended after
//     PrepareCompaction (index Preparation.At and on) are kept, so steering
//     and follow-ups that arrive meanwhile are not lost if the caller applies
//     to the current history.
//
// Found while porting, also reproduced:
//
//   - A split turn that starts at the previous compaction's first kept
//     message (a run compacted mid-turn, as overflow recovery does, then
//     compacted again) has no messages to summarize, so compact() writes
//     "No prior history." for the history part and the previous summary is
//     dropped from the context (18 golden cases).
//   - When everything since the last compaction fits in KeepRecentTokens, pi
//     still asks the model to summarize an empty conversation.
//     Preparation.NothingToSummarize lets a caller refuse instead.
//   - Images in user messages count as no tokens (those in tool results
//     count 1200).
package compaction

//go:generate sh -c "npm ci --prefix reference --no-audit --no-fund && node reference/gen.mjs testdata/golden.json.gz"
