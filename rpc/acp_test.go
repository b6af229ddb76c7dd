package rpc

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

// TestWireEncoding pins the exact JSON of the types whose shape clients
// depend on, and checks that each decodes back to the same value.
func TestWireEncoding(t *testing.T) {
	for _, test := range []struct {
		name string
		v    any
		want string
	}{
		{"diff new file has oldText null", &ToolCallContent{Type: ToolContentDiff, Path: "/w/a", NewText: "x"},
			`{"type":"diff","path":"/w/a","oldText":null,"newText":"x"}`},
		{"diff edit", ptr(DiffContent("/w/a", ptr("a"), "")),
			`{"type":"diff","path":"/w/a","oldText":"a","newText":""}`},
		{"text content", ptr(TextContent("")),
			`{"type":"content","content":{"type":"text","text":""}}`},
		{"terminal content", &ToolCallContent{Type: ToolContentTerminal, TerminalID: "t1"},
			`{"type":"terminal","terminalId":"t1"}`},
		{"image block", &ContentBlock{Type: ContentImage, Data: "AAA=", MimeType: "image/png"},
			`{"type":"image","data":"AAA=","mimeType":"image/png"}`},
		{"resource link", &ContentBlock{Type: ContentResourceLink, URI: "file:///a", Name: "a", Size: ptr(int64(3))},
			`{"type":"resource_link","uri":"file:///a","name":"a","size":3}`},
		{"embedded resource", &ContentBlock{Type: ContentResource, Resource: &EmbeddedResource{URI: "file:///a", Text: ptr("")}},
			`{"type":"resource","resource":{"uri":"file:///a","text":""}}`},
		{"tool call update omits unchanged arrays", &ToolCallUpdate{ToolCallID: "c", Status: ToolStatusInProgress},
			`{"toolCallId":"c","status":"in_progress"}`},
		{"tool call update clears arrays", &ToolCallUpdate{ToolCallID: "c", Content: []ToolCallContent{}, Locations: []ToolCallLocation{}},
			`{"toolCallId":"c","content":[],"locations":[]}`},
		{"permission request", &RequestPermissionRequest{SessionID: "s", ToolCall: ToolCallUpdate{ToolCallID: "c", Title: "Write a", Kind: ToolKindEdit},
			Options: []PermissionOption{{OptionID: "allow_once", Name: "Allow once", Kind: PermissionAllowOnce}}},
			`{"sessionId":"s","toolCall":{"toolCallId":"c","title":"Write a","kind":"edit"},"options":[{"optionId":"allow_once","name":"Allow once","kind":"allow_once"}]}`},
		{"permission cancelled", &RequestPermissionResponse{Outcome: PermissionOutcome{Outcome: OutcomeCancelled}},
			`{"outcome":{"outcome":"cancelled"}}`},
		{"session options tools omitted", &SessionOptions{Preset: PresetReadOnly}, `{"preset":"read-only"}`},
		{"session options no tools", &SessionOptions{Tools: ptr([]string{})}, `{"tools":[]}`},
		{"new session", &NewSessionResponse{SessionID: "s", Modes: &SessionModeState{CurrentModeID: "read-only",
			AvailableModes: []SessionMode{{ID: "read-only", Name: "Read only"}}},
			ConfigOptions: []SessionConfigOption{{ID: "preset", Name: "Preset", Category: ConfigCategoryMode, Type: ConfigTypeSelect,
				CurrentValue: "read-only", Options: []SessionConfigSelectOption{{Value: "read-only", Name: "Read only"}}}}},
			`{"sessionId":"s","modes":{"currentModeId":"read-only","availableModes":[{"id":"read-only","name":"Read only"}]},` +
				`"configOptions":[{"id":"preset","name":"Preset","category":"mode","type":"select","currentValue":"read-only","options":[{"value":"read-only","name":"Read only"}]}]}`},
		{"initialize response", &InitializeResponse{ProtocolVersion: 1, AgentInfo: &Implementation{Name: "coding-agent", Title: "coding-agent", Version: "0.1.0"},
			AuthMethods: []json.RawMessage{},
			AgentCapabilities: AgentCapabilities{LoadSession: true, PromptCapabilities: PromptCapabilities{Image: true, EmbeddedContext: true},
				SessionCapabilities: &SessionCapabilities{List: &Empty{}, Resume: &Empty{}, Close: &Empty{}},
				Meta: &AgentMeta{CodingAgent: &CodingAgentCapabilities{Tools: []string{"read", "bash", "edit", "write"},
					DocumentSync: &DocumentSync{Version: 1}, DirectTools: true, Outputs: true,
					Sandbox: &SandboxInfo{Available: true, Kind: "linux-userns-landlock"}}}}},
			`{"protocolVersion":1,"agentInfo":{"name":"coding-agent","title":"coding-agent","version":"0.1.0"},"authMethods":[],` +
				`"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"audio":false,"embeddedContext":true},` +
				`"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"list":{},"resume":{},"close":{}},` +
				`"_meta":{"coding-agent":{"tools":["read","bash","edit","write"],"documentSync":{"version":1},"directTools":true,"outputs":true,` +
				`"sandbox":{"available":true,"kind":"linux-userns-landlock"}}}}}`},
		{"file change without origin", &FileChange{Path: "/a", URI: "file:///a", Kind: ChangeDeleted},
			`{"path":"/a","uri":"file:///a","kind":"deleted","origin":null,"open":false}`},
		{"did change", &DidChangeNotification{SessionID: "s", URI: "file:///a", Version: 2, ContentChanges: []ContentChange{
			{Range: &Range{Start: Position{0, 1}, End: Position{0, 2}}, Text: "x"}, {Text: "all"}}},
			`{"sessionId":"s","uri":"file:///a","version":2,"contentChanges":[{"range":{"start":{"line":0,"character":1},"end":{"line":0,"character":2}},"text":"x"},{"text":"all"}]}`},
		{"output info", &OutputInfo{Path: "/d/o", Bytes: 3, ToolCallID: "c", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
			`{"path":"/d/o","bytes":3,"toolCallId":"c","createdAt":"2026-01-02T03:04:05Z"}`},
		{"tools call result", &ToolsCallResponse{Content: []ContentBlock{TextBlock("hi")}, IsError: true, Details: json.RawMessage(`{"exitCode":1}`)},
			`{"content":[{"type":"text","text":"hi"}],"isError":true,"details":{"exitCode":1}}`},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, err := marshal(test.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != test.want {
				t.Fatalf("encoding:\n got %s\nwant %s", got, test.want)
			}
			back := reflect.New(reflect.TypeOf(test.v).Elem()).Interface()
			if err := json.Unmarshal(got, back); err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if !reflect.DeepEqual(back, test.v) {
				t.Fatalf("round trip changed the value:\n got %#v\nwant %#v", back, test.v)
			}
		})
	}
}

func TestSessionUpdateUnion(t *testing.T) {
	for _, test := range []struct {
		update SessionUpdate
		want   string
	}{
		{&AgentMessageChunk{Content: TextBlock("hi"), MessageID: "m1"},
			`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m1"}`},
		{&UserMessageChunk{Content: TextBlock("q")}, `{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"q"}}`},
		{&AgentThoughtChunk{Content: TextBlock("t")}, `{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"t"}}`},
		{&ToolCall{ToolCallID: "c1", Title: "Read a.txt", Name: "read", Kind: ToolKindRead, Status: ToolStatusPending,
			Locations: []ToolCallLocation{{Path: "/w/a.txt", Line: 1}}, RawInput: json.RawMessage(`{"path":"a.txt"}`)},
			`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read a.txt","name":"read","kind":"read","status":"pending","locations":[{"path":"/w/a.txt","line":1}],"rawInput":{"path":"a.txt"}}`},
		{&ToolCallUpdate{ToolCallID: "c1", Status: ToolStatusCompleted, Content: []ToolCallContent{DiffContent("/w/n", nil, "new")}},
			`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","content":[{"type":"diff","path":"/w/n","oldText":null,"newText":"new"}]}`},
		{&Plan{Entries: []PlanEntry{{Content: "x", Priority: "high", Status: "pending"}}},
			`{"sessionUpdate":"plan","entries":[{"content":"x","priority":"high","status":"pending"}]}`},
		{&AvailableCommandsUpdate{AvailableCommands: []AvailableCommand{{Name: "review", Description: "d", Input: &AvailableCommandInput{Hint: "h"}}}},
			`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"review","description":"d","input":{"hint":"h"}}]}`},
		{&CurrentModeUpdate{CurrentModeID: "full-access"}, `{"sessionUpdate":"current_mode_update","currentModeId":"full-access"}`},
		{&ConfigOptionUpdate{ConfigOptions: []SessionConfigOption{}}, `{"sessionUpdate":"config_option_update","configOptions":[]}`},
		{&UsageUpdate{Used: 10, Size: 100, Cost: &Cost{Amount: 0.5, Currency: "USD"}},
			`{"sessionUpdate":"usage_update","used":10,"size":100,"cost":{"amount":0.5,"currency":"USD"}}`},
		{&SessionInfoUpdate{Title: ptr("T")}, `{"sessionUpdate":"session_info_update","title":"T"}`},
		{&SessionInfoUpdate{}, `{"sessionUpdate":"session_info_update"}`},
		{&CompactionUpdate{CompactionID: "cmp_1", Status: "in_progress"}, `{"sessionUpdate":"compaction_update","compactionId":"cmp_1","status":"in_progress"}`},
		{&CompactionUpdate{CompactionID: "cmp_1", Status: "completed", Summary: &[]ContentBlock{TextBlock("s")}},
			`{"sessionUpdate":"compaction_update","compactionId":"cmp_1","status":"completed","summary":[{"type":"text","text":"s"}]}`},
	} {
		t.Run(test.update.SessionUpdateKind(), func(t *testing.T) {
			n := SessionNotification{SessionID: "s1", Update: test.update}
			got, err := marshal(n)
			if err != nil {
				t.Fatal(err)
			}
			want := `{"sessionId":"s1","update":` + test.want + `}`
			if string(got) != want {
				t.Fatalf("encoding:\n got %s\nwant %s", got, want)
			}
			var back SessionNotification
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, n) {
				t.Fatalf("round trip:\n got %#v\nwant %#v", back.Update, n.Update)
			}
		})
	}
	var n SessionNotification
	err := json.Unmarshal([]byte(`{"sessionId":"s","update":{"sessionUpdate":"_custom","title":"x"}}`), &n)
	if err == nil || !strings.Contains(err.Error(), `unknown variant "_custom"`) {
		t.Fatalf("unknown variant decoded as %#v, err %v", n.Update, err)
	}
	if _, err := marshal(SessionNotification{SessionID: "s"}); err == nil {
		t.Fatal("a notification without update encoded without error")
	}
}

func TestNewSessionToolsPresence(t *testing.T) {
	for _, test := range []struct {
		params string
		want   []string // nil: omitted
		set    bool
	}{
		{`{"cwd":"/w","mcpServers":[]}`, nil, false},
		{`{"cwd":"/w","_meta":{"coding-agent":{}}}`, nil, false},
		{`{"cwd":"/w","_meta":{"coding-agent":{"tools":null}}}`, nil, false},
		{`{"cwd":"/w","_meta":{"coding-agent":{"tools":[]}}}`, []string{}, true},
		{`{"cwd":"/w","_meta":{"other.vendor":5,"coding-agent":{"tools":["read","read"]}}}`, []string{"read", "read"}, true},
	} {
		var req NewSessionRequest
		if err := decodeParams(json.RawMessage(test.params), []string{"cwd"}, &req); err != nil {
			t.Fatalf("%s: %v", test.params, err)
		}
		opts := req.Meta.Options()
		var got *[]string
		if opts != nil {
			got = opts.Tools
		}
		if (got != nil) != test.set {
			t.Fatalf("%s: tools set = %v, want %v", test.params, got != nil, test.set)
		}
		if test.set && (!reflect.DeepEqual(*got, test.want) || *got == nil) {
			t.Fatalf("%s: tools = %#v, want %#v", test.params, *got, test.want)
		}
	}
}
