package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// TestRegisterInABrowser follows the README as a newcomer would, in a real
// headless Chromium: open pitcrew, register the app on an organisation
// through the (fake) GitHub, land on the done page, label an issue, and see
// the run on the status page. Screenshots go to SCREENSHOT_DIR (the ones in
// docs/screenshots come from this test).
func TestRegisterInABrowser(t *testing.T) {
	chromium, err := lookChromium()
	if err != nil {
		testenv.SkipWithout(t, "Chromium", "apt-get install -y chromium")
	}
	base, gh, _ := setupPitcrew(t)
	gh.SetPermission("alice", "write")
	shots := os.Getenv("SCREENSHOT_DIR")
	if shots == "" {
		shots = t.TempDir()
	}
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1000, 760),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true))...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // start the browser outside any timeout
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	shot := func(name string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			png, err := chromedp.FullScreenshot(100)(ctx, tg)
			if err != nil {
				return chromedp.Void{}, err
			}
			return chromedp.Void{}, os.WriteFile(filepath.Join(shots, name), png, 0o644)
		}
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible("#register"),
		shot("1-setup.png"),
		chromedp.Click(`input[value="organization"]`),
		chromedp.SendKeys("#org", "hexpm"),
		chromedp.Click("#register"),
		chromedp.WaitVisible("#continue"),
		shot("2-continue.png"),
		chromedp.Click("#continue"),
		chromedp.WaitVisible("#install"),
		shot("3-registered.png"),
	)
	if err != nil {
		t.Fatal(err)
	}
	done, err := chromedp.Run(ctx, chromedp.Text("body"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(done, "is now serving webhooks") {
		t.Fatalf("done page: %s", done)
	}

	// The app now serves: a labelled issue starts a run the status page shows.
	payload := []byte(`{"action":"labeled","label":{"name":"flaky"},"issue":{"number":7,"title":"Flaky test/hexpm/accounts/user_test.exs:12","body":""},` +
		`"repository":{"name":"hexpm","full_name":"hexpm/hexpm","owner":{"login":"hexpm"}},"sender":{"login":"alice","type":"User"},"installation":{"id":42}}`)
	if code := deliver(t, base, "browser-1", "secret-from-github", payload); code != http.StatusAccepted {
		t.Fatalf("delivery answered %d", code)
	}
	// The run, its start and the delivery's record are written one after
	// the other: wait for all of them.
	wants := []string{"user_test.exs:12", "hexpm/hexpm", "started", "browser-1", "handled"}
	shows := func(page string) bool {
		for _, w := range wants {
			if !strings.Contains(page, w) {
				return false
			}
		}
		return true
	}
	var status string
	for deadline := time.Now().Add(15 * time.Second); !shows(status); {
		if time.Now().After(deadline) {
			t.Fatalf("status page never showed all of %q:\n%s", wants, status)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible("#deliveries")); err != nil {
			t.Fatal(err)
		}
		if status, err = chromedp.Run(ctx, chromedp.Text("body")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := chromedp.Do(ctx, shot("4-status.png")); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)
}

func lookChromium() (string, error) {
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("not found")
}
