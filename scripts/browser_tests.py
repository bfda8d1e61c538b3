#!/usr/bin/env python3
"""ChatCave's web app in a real headless Chromium, against a running `chatcave serve`.

Run by scripts/browser-tests.sh, which builds `chatcave`, starts the server and stops it.
Uses Debian's Chromium and chromedriver through Selenium; nothing is downloaded.

Scenarios:
  a. alice and bob sign up in two browsers, create and join a room, and chat: each sees the
     other's messages in order, each once (and the room list, room creation and deletion work).
  b. a message posted with `chatcave say` appears in the browser; one posted in the browser
     appears in the output of `chatcave tail`.
  c. bob's API key is revoked (DELETE /account with that key: what `chatcave signout` sends);
     bob's next post brings up the sign-in view; after signing in the held post is delivered
     exactly once.
  d. a room name and a message holding `<img src=x onerror=…>` and `<script>` render as text:
     no dialog, no img element, no script run.
  e. a screenshot of each main view is saved in the output folder and checked to be a PNG.
Also: no Content Security Policy violation or uncaught error in either browser's console,
and signing out ends the session.
"""

import argparse
import json
import os
import signal
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

WAIT = 10  # seconds any one expected change in a page may take
PASSWORD = "correct horse"
XSS_ROOM = "<img src=x onerror=alert(1)><script>alert(2)</script>"
XSS_TEXT = '<img src=x onerror="window.pwned=1;alert(1)"> and <script>window.pwned=2;alert(2)</script>'


class Failure(Exception):
    """A scenario's expectation that did not hold."""


def check(condition, message):
    if not condition:
        raise Failure(message)


class Browser:
    """One headless Chromium session (one user), with helpers that drive the app's views."""

    def __init__(self, name, args, width=1000, height=760):
        self.name = name
        self.base = args.server
        options = webdriver.ChromeOptions()
        options.binary_location = args.chromium
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--no-first-run", "--disable-extensions", "--disable-background-networking",
                     "--lang=en-US", f"--window-size={width},{height}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(args.chromedriver), options=options)
        self.driver.set_page_load_timeout(WAIT)
        self.console = []

    def quit(self):
        try:
            self.driver.quit()
        except Exception:  # the browser may already be gone
            pass

    def wait(self, predicate, what, timeout=WAIT):
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.1).until(lambda _: predicate())
        except TimeoutException:
            raise Failure(f"{self.name}: timed out after {timeout} s waiting for {what}") from None

    def by_id(self, element_id):
        return self.driver.find_element(By.ID, element_id)

    def visible_view(self):
        return self.driver.execute_script(
            "const v = [...document.querySelectorAll('section.view')].find(s => !s.hidden);"
            "return v ? v.id : null;")

    def wait_view(self, view, timeout=WAIT):
        self.wait(lambda: self.visible_view() == f"view-{view}", f"the {view} view", timeout)

    def open(self):
        self.driver.get(self.base + "/")
        self.wait_view("sign-in")

    def authenticate(self, name, creating):
        field = self.by_id("sign-in-name")
        field.clear()
        field.send_keys(name)
        password = self.by_id("sign-in-password")
        password.clear()
        password.send_keys(PASSWORD)
        if creating:
            self.by_id("sign-up-button").click()
        else:
            password.send_keys(Keys.ENTER)  # the form submits from the keyboard

    def sign_up(self, name):
        self.open()
        self.authenticate(name, creating=True)
        self.wait_view("rooms")
        check(self.by_id("account-name").text == name, f"{self.name}: the header names {name}")

    def session_key(self):
        return self.driver.execute_script(
            "return JSON.parse(sessionStorage.getItem('chatcave.session') || 'null')?.apiKey ?? null;")

    def room_names(self):
        return self.driver.execute_script(
            "return [...document.querySelectorAll('#room-list li a')].map(a => a.textContent);")

    def refresh_rooms(self):
        self.by_id("refresh-rooms").click()

    def create_room(self, name):
        field = self.by_id("new-room-name")
        field.clear()
        field.send_keys(name)
        self.by_id("create-room-button").click()
        self.wait_view("room")
        self.wait(lambda: self.by_id("room-title").get_attribute("textContent") == name, f"the title {name!r}")

    def open_room(self, name):
        def find():
            for link in self.driver.find_elements(By.CSS_SELECTOR, "#room-list li a"):
                if link.get_attribute("textContent") == name:
                    return link
            self.refresh_rooms()
            time.sleep(0.3)
            return None
        link = self.wait(find, f"the room {name!r} in the list")
        link.click()
        self.wait_view("room")
        self.wait(lambda: self.by_id("room-title").get_attribute("textContent") == name, f"the title {name!r}")

    def join(self):
        self.by_id("join-button").click()
        self.wait(lambda: self.by_id("leave-button").is_displayed(), "the Leave button after joining")
        self.wait(lambda: self.by_id("message-text").is_enabled(), "the message field to be enabled")

    def post(self, text, with_enter=True):
        field = self.by_id("message-text")
        self.wait(field.is_enabled, "the message field to be enabled")
        lines = text.split("\n")
        field.send_keys(lines[0])
        for line in lines[1:]:  # Shift+Enter starts a new line; Enter alone sends
            ActionChains(self.driver).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).perform()
            field.send_keys(line)
        if with_enter:
            field.send_keys(Keys.ENTER)
        else:
            self.by_id("send-button").click()

    def messages(self):
        """The chat messages shown, in order: (id, author, text)."""
        return self.driver.execute_script(
            "return [...document.querySelectorAll('#message-list li.chat')].map(li => ["
            "li.dataset.messageId, li.querySelector('.author').textContent, li.querySelector('.text').textContent]);")

    def texts(self):
        return [text for _, _, text in self.messages()]

    def wait_texts(self, expected, timeout=WAIT):
        """Waits until the chat texts end with `expected`, then checks order and duplicates."""
        self.wait(lambda: self.texts()[-len(expected):] == expected, f"the messages {expected}", timeout)
        shown = self.messages()
        ids = [message_id for message_id, _, _ in shown]
        check(len(ids) == len(set(ids)), f"{self.name}: a message is shown twice: {shown}")
        return shown

    def screenshot(self, folder, name):
        path = os.path.join(folder, f"{name}.png")
        self.driver.save_screenshot(path)
        check_png(path)
        print(f"   screenshot {path} ({os.path.getsize(path)} bytes)")
        return path

    def collect_console(self):
        try:
            self.console += self.driver.get_log("browser")
        except Exception:
            pass
        return self.console

    def no_alert(self):
        try:
            alert = self.driver.switch_to.alert
            text = alert.text
            alert.dismiss()
            raise Failure(f"{self.name}: a dialog opened: {text!r}")
        except NoAlertPresentException:
            pass


def check_png(path):
    with open(path, "rb") as file:
        head = file.read(24)
    check(len(head) == 24 and head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR",
          f"{path} is not a PNG")
    width, height = struct.unpack(">II", head[16:24])
    check(width > 0 and height > 0 and os.path.getsize(path) > 2_000, f"{path} is empty ({width}x{height})")


def api(args, method, path, key=None, body=None):
    """One request to the JSON API, as a client other than the browsers; returns (status, value)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(args.server + path, data=data, method=method)
    request.add_header("Accept", "application/json")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if key:
        request.add_header("X-Magic-Auth", key)
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as response:
            text = response.read()
            return response.status, json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        text = error.read()
        return error.code, json.loads(text) if text else None


def cli(args, *arguments, stdin=None):
    """Runs `chatcave` with its own session folder; returns its standard output."""
    result = subprocess.run([args.chatcave, *arguments, "--server", args.server], input=stdin, capture_output=True,
                            text=True, timeout=30, env=cli_environment(args))
    check(result.returncode == 0, f"chatcave {' '.join(arguments)} failed ({result.returncode}): {result.stderr}")
    return result.stdout


def cli_environment(args):
    environment = dict(os.environ)
    environment["CHATCAVE_HOME"] = os.path.join(args.output, "cli-home")
    return environment


def scenario_chat(alice, bob, args):
    print("a. two browsers sign up, create and join a room, and chat")
    alice.sign_up("alice")
    alice.screenshot(args.output, "rooms-empty")
    bob.sign_up("bob")
    alice.create_room("Scratch")
    alice.by_id("back-to-rooms").click()
    alice.wait_view("rooms")
    alice.wait(lambda: "Scratch" in alice.room_names(), "Scratch in the list")
    alice.driver.find_element(By.CSS_SELECTOR, "#room-list button[aria-label='Delete room Scratch']").click()
    alice.wait(lambda: "Scratch" not in alice.room_names(), "Scratch to be deleted")
    alice.create_room("Lobby")
    alice.join()
    field = bob.by_id("new-room-name")
    field.send_keys("Lobby")
    field.send_keys(Keys.ENTER)
    bob.wait(lambda: bob.by_id("rooms-error").text == "A room named 'Lobby' already exists",
             "the server's error text for a taken room name")
    field.clear()
    bob.open_room("Lobby")
    bob.join()
    # Each post waits until the other side saw the one before, so the order is known.
    expected = ["Hello bob!", "Hi alice", "How are you?\nTwo lines here.", "Fine, thanks"]
    posters = [alice, bob, alice, bob]
    for index, (text, poster) in enumerate(zip(expected, posters)):
        poster.post(text, with_enter=index != 1)
        other = bob if poster is alice else alice
        other.wait_texts(expected[:index + 1])
    status, server_messages = api(args, "GET", f"/rooms/{room_id(alice)}/messages", key=alice.session_key())
    check(status == 200, f"messages: {status}")
    check([m["text"] for m in server_messages if m["type"] == "chat"] == expected, f"the server holds {server_messages}")
    for browser in (alice, bob):
        shown = browser.wait_texts(expected)
        check([text for _, _, text in shown] == expected, f"{browser.name} shows {shown}")
        check([author for _, author, _ in shown] == ["alice", "bob", "alice", "bob"], f"{browser.name}: authors {shown}")
    chatters = bob.by_id("chatter-list").text
    check("alice" in chatters and "bob" in chatters, f"chatters: {chatters}")
    bob.screenshot(args.output, "room")


def room_id(browser):
    return browser.driver.execute_script("return decodeURIComponent(location.hash.slice('#/rooms/'.length));")


def scenario_cli(alice, args):
    print("b. a message from `chatcave say` appears in the browser; one from the browser in `chatcave tail`")
    cli(args, "signup", "--name", "carol", "--password-stdin", stdin=PASSWORD + "\n")
    cli(args, "join", "Lobby")
    cli(args, "say", "Lobby", "Posted from the CLI")
    alice.wait_texts(["Posted from the CLI"])
    tail = subprocess.Popen([args.chatcave, "tail", "Lobby", "--interval", "0.2", "--server", args.server],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_environment(args))
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(tail.stdout), daemon=True)  # ends when tail does
    reader.start()
    try:
        def wait_for_line(fragment):
            deadline = time.monotonic() + WAIT
            while not any(fragment in line for line in list(lines)) and time.monotonic() < deadline:
                time.sleep(0.1)
            check(any(fragment in line for line in list(lines)), f"tail printed {fragment!r}: {lines}")
        wait_for_line("carol: Posted from the CLI")
        alice.post("Posted from the browser")
        wait_for_line("alice: Posted from the browser")
        time.sleep(1)
        check(sum("Posted from the browser" in line for line in list(lines)) == 1, f"tail printed it once: {lines}")
    finally:
        tail.send_signal(signal.SIGINT)
        try:
            tail.wait(timeout=5)
        except subprocess.TimeoutExpired:
            tail.kill()
            tail.wait(timeout=5)
    check(tail.returncode == 0, f"chatcave tail ended with {tail.returncode}: {tail.stderr.read()}")


def scenario_revoked(alice, bob, args):
    print("c. bob's key is revoked; his next post brings up sign-in, then is delivered once")
    key = bob.session_key()
    check(key, "bob has a key in sessionStorage")
    check(bob.driver.get_cookies() == [], f"no cookies: {bob.driver.get_cookies()}")
    bob.by_id("message-text").send_keys("Held while signed out")
    status, _ = api(args, "DELETE", "/account", key=key)
    check(status == 200, f"revoking bob's key: {status}")
    # Sent at once, so that it is bob's next request (a poll that gets there first is held too).
    bob.driver.execute_script("document.getElementById('post-form').requestSubmit();")
    bob.wait_view("sign-in")
    check(api(args, "GET", "/rooms", key=key)[0] == 401, "the revoked key is refused")
    note = bob.by_id("sign-in-note").text
    check("session has ended" in note, f"the sign-in note: {note!r}")
    check(bob.by_id("sign-in-name").get_attribute("value") == "bob", "the name is filled in")
    time.sleep(2)  # polls and the post are held meanwhile, not repeated
    status, messages = api(args, "GET", f"/rooms/{room_id(alice)}/messages", key=alice.session_key())
    check(not [m for m in messages if m["text"] == "Held while signed out"], "the held post is not sent before sign-in")
    bob.screenshot(args.output, "sign-in-again")
    bob.by_id("sign-in-password").send_keys("wrong password", Keys.ENTER)
    bob.wait(lambda: bob.by_id("sign-in-error").text == "Invalid username/password combination",
             "the server's error text for a wrong password")
    bob.authenticate("bob", creating=False)
    bob.wait_view("room")
    bob.wait_texts(["Held while signed out"])
    alice.wait_texts(["Held while signed out"])
    check(bob.session_key() not in (None, key), "bob has a new key")
    time.sleep(2)  # a late duplicate would show by now
    status, messages = api(args, "GET", f"/rooms/{room_id(alice)}/messages", key=alice.session_key())
    held = [m for m in messages if m["text"] == "Held while signed out"]
    check(status == 200 and len(held) == 1, f"the held post is on the server once: {held}")
    check(bob.texts().count("Held while signed out") == 1 and alice.texts().count("Held while signed out") == 1,
          "the held post is shown once")
    check(bob.by_id("message-text").get_attribute("value") == "", "the message field was cleared")


def scenario_markup(alice, bob, args):
    print("d. markup in a room name and a message renders as text")
    alice.by_id("back-to-rooms").click()
    alice.wait_view("rooms")
    alice.create_room(XSS_ROOM)
    alice.join()
    alice.post(XSS_TEXT)
    alice.wait_texts([XSS_TEXT])
    bob.by_id("back-to-rooms").click()
    bob.wait_view("rooms")
    bob.open_room(XSS_ROOM)
    bob.wait_texts([XSS_TEXT])
    for browser in (alice, bob):
        browser.no_alert()
        found = browser.driver.execute_script(
            "return {img: document.querySelectorAll('img').length, scripts: document.scripts.length,"
            " pwned: window.pwned ?? null, title: document.getElementById('room-title').textContent};")
        check(found["img"] == 0, f"{browser.name}: an img element exists")
        check(found["scripts"] == 1, f"{browser.name}: {found['scripts']} script elements")
        check(found["pwned"] is None, f"{browser.name}: injected script ran ({found['pwned']})")
        check(found["title"] == XSS_ROOM, f"{browser.name}: the title is {found['title']!r}")
    alice.screenshot(args.output, "room-markup")


def scenario_screens(args):
    print("e. screenshots of the views, at desktop and phone widths")
    fresh = Browser("visitor", args, width=1000, height=640)
    try:
        fresh.open()
        fresh.screenshot(args.output, "sign-in")
        fresh.authenticate("dave", creating=True)
        fresh.wait_view("rooms")
        fresh.wait(lambda: "Lobby" in fresh.room_names(), "the rooms")
        fresh.screenshot(args.output, "rooms")
        fresh.open_room("Lobby")
        fresh.wait(lambda: "Held while signed out" in fresh.texts(), "the Lobby's messages")
        fresh.driver.set_window_size(390, 760)
        fresh.screenshot(args.output, "room-phone")
        fresh.collect_console()
        return fresh.console
    finally:
        fresh.quit()


def scenario_sign_out(alice, args):
    print("   signing out ends the session")
    key = alice.session_key()
    alice.by_id("sign-out").click()
    alice.wait_view("sign-in")
    check(alice.session_key() is None, "sessionStorage was cleared")
    check(api(args, "GET", "/rooms", key=key)[0] == 401, "the key was revoked by signing out")


def console_problems(entries):
    """Console entries that mean a bug: a CSP violation, an uncaught error, or one of the app's
    own files failing to load (the API's refusals that the scenarios cause are expected)."""
    own_files = ("/app.js ", "/app.css ", "/favicon.svg ")
    return [entry["message"] for entry in entries
            if "Content Security Policy" in entry["message"] or "Uncaught" in entry["message"]
            or ("Failed to load resource" in entry["message"] and any(name in entry["message"] for name in own_files))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True, help="the server's base URL, e.g. http://127.0.0.1:3000")
    parser.add_argument("--chatcave", required=True, help="the chatcave binary")
    parser.add_argument("--output", required=True, help="the folder for screenshots and logs")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    args = parser.parse_args()
    os.makedirs(os.path.join(args.output, "cli-home"), mode=0o700, exist_ok=True)
    # `timeout` ends the script with SIGTERM: exit through the finally blocks, which quit the browsers.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(f"stopped by signal {number}"))
    started = time.monotonic()
    alice = Browser("alice", args)
    bob = Browser("bob", args)
    try:
        alice.open()
        alice.screenshot(args.output, "sign-in-desktop")
        scenario_chat(alice, bob, args)
        scenario_cli(alice, args)
        scenario_revoked(alice, bob, args)
        scenario_markup(alice, bob, args)
        console = scenario_screens(args)
        scenario_sign_out(alice, args)
        for browser in (alice, bob):
            console += browser.collect_console()
        problems = console_problems(console)
        check(not problems, "console problems:\n  " + "\n  ".join(problems))
    except Exception as failure:  # a Failure, or the browser or driver failing
        for browser in (alice, bob):
            try:
                browser.driver.save_screenshot(os.path.join(args.output, f"failure-{browser.name}.png"))
                print(f"   {browser.name}'s console: {[e['message'] for e in browser.collect_console()]}")
            except Exception:
                pass
        print(f"FAILED: {type(failure).__name__}: {failure}", file=sys.stderr)
        return 1
    finally:
        alice.quit()
        bob.quit()
    print(f"browser tests passed in {time.monotonic() - started:.1f} s; screenshots in {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
