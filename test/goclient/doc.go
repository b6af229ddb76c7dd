// Package goclient holds an end-to-end test that drives the coding-agent
// binary with github.com/coder/acp-go-sdk, a Go ACP client nobody on this
// project wrote, used unmodified. It is a module of its own so that the
// product's go.mod never lists the SDK.
package goclient
