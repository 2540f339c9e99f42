#!/usr/bin/env python3
"""A seqby exec handler in Python (standard library only): a ledger kept in SQLite, fenced.

`seqby worker --exec 'python3 ledger.py --db ledger.sqlite'` starts this program and hands it one
event at a time over stdin/stdout (docs/handler-protocol.md). Each event is applied to the
account of its partition (category, key) in ONE SQLite transaction, which also holds the fence:

  - per account the database keeps the position (stream id) of the last event applied and the
    highest lease generation that touched the account;
  - a request whose lease generation is LOWER than the stored one comes from a stale owner (a
    worker that stalled past its lease while a newer owner took over): it is refused inside the
    transaction, recorded in the `refused` table, logged to stderr, and answered ok:false;
  - a request for an event at or below the stored position was applied already (the at-least-once
    re-run: the previous owner died after the commit and before the acknowledgement): it is
    absorbed, recorded in the `absorbed` table, and answered ok:true with no second effect;
  - otherwise the event's effect is applied (deposit, withdraw or interest: the balance depends
    on the order), a row is appended to `applied`, and the position and generation advance.

Events: data {"amount": N} with type "deposit" or "withdraw", or {"percent": P} with type
"interest" (balance += balance * P // 100). Any other type is refused (ok:false, so the worker
retries and then halts the partition on it: the poison rule).

`ledger.py --db FILE --show` prints the database's state, one line per row.

Test hooks (off unless given): --pause-dir DIR with --pause-before-write ID (wait before the
transaction of event ID until DIR/ID.go exists) or --pause-after-commit ID (wait after its
commit, before the reply, until DIR/ID.go exists). Each pause happens once: it first creates
DIR/ID.paused (or DIR/ID.committed) holding this process's pid and the request's lease, and a
marker that exists already means "paused before", so a re-delivery does not pause again.
"""

import argparse
import json
import os
import sqlite3
import sys
import time

SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
  category TEXT NOT NULL, key TEXT NOT NULL,
  balance INTEGER NOT NULL,
  position_ms INTEGER NOT NULL, position_seq INTEGER NOT NULL,  -- the last applied stream id
  generation INTEGER NOT NULL,          -- the highest lease generation that touched the account
  events INTEGER NOT NULL,              -- events applied
  PRIMARY KEY (category, key));
CREATE TABLE IF NOT EXISTS applied (    -- append-only: one row per applied event, in order
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  category TEXT NOT NULL, key TEXT NOT NULL, event_id TEXT NOT NULL, type TEXT NOT NULL,
  amount INTEGER NOT NULL, balance_after INTEGER NOT NULL,
  generation INTEGER NOT NULL, token TEXT NOT NULL, delivery_count INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS refused (    -- stale owners' writes, refused by the fence
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  category TEXT NOT NULL, key TEXT NOT NULL, event_id TEXT NOT NULL,
  generation INTEGER NOT NULL, token TEXT NOT NULL, stored_generation INTEGER NOT NULL,
  delivery_count INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS absorbed (   -- re-runs of events applied already
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  category TEXT NOT NULL, key TEXT NOT NULL, event_id TEXT NOT NULL,
  generation INTEGER NOT NULL, token TEXT NOT NULL, delivery_count INTEGER NOT NULL);
"""


def log(message):
    """One line to stderr: the worker copies it to its own log, prefixed with this child."""
    sys.stderr.write("ledger: " + message + "\n")
    sys.stderr.flush()


def reply(line):
    sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def stream_position(event_id):
    """A stream entry id "MS-SEQ" as the pair it is ordered by."""
    ms, _, seq = event_id.partition("-")
    return int(ms), int(seq)


def open_database(path):
    # isolation_level=None: this code says BEGIN and COMMIT itself. The timeout waits for the
    # other children's transactions (one writer at a time) instead of failing at once.
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.executescript(SCHEMA)
    return db


class Pauses:
    """The test hooks: wait at one event until a file exists (see the module's docstring)."""

    def __init__(self, directory, before_write, after_commit):
        self.directory = directory
        self.before_write = before_write
        self.after_commit = after_commit

    def at(self, where, event_id, lease):
        wanted = self.before_write if where == "paused" else self.after_commit
        if self.directory is None or event_id != wanted:
            return
        marker = os.path.join(self.directory, event_id + "." + where)
        go = os.path.join(self.directory, event_id + ".go")
        try:
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return  # paused here before: a re-delivery goes on
        what = {"pid": os.getpid(), "generation": lease["generation"], "token": lease["token"]}
        os.write(fd, (json.dumps(what) + "\n").encode())
        os.close(fd)
        log("test hook: %s at event %s (lease %s), waiting for %s" % (where, event_id,
                                                                     lease["token"], go))
        parent = os.getppid()
        while not os.path.exists(go):
            if os.getppid() != parent:  # the worker died: nobody will read the reply
                log("test hook: the worker is gone, exiting")
                sys.exit(1)
            time.sleep(0.02)
        log("test hook: %s goes on" % event_id)


def apply_event(db, event, lease, pauses):
    """Applies one event in one transaction. Returns the reply's fields (without n)."""
    category, key, event_id = event["category"], event["key"], event["id"]
    position = stream_position(event_id)
    generation, token = lease["generation"], lease["token"]
    delivery = event.get("delivery_count", 1)
    data = event.get("data") or {}
    kind = event.get("type", "")

    pauses.at("paused", event_id, lease)
    # BEGIN IMMEDIATE takes the write lock now: the fence check below and the write after it
    # see the same state; no other writer comes between them.
    db.execute("BEGIN IMMEDIATE")
    try:
        row = db.execute(
            "SELECT balance, position_ms, position_seq, generation, events FROM accounts "
            "WHERE category = ? AND key = ?", (category, key)).fetchone()
        balance, stored_position, stored_generation, events = (
            (row[0], (row[1], row[2]), row[3], row[4]) if row else (0, (0, 0), 0, 0))

        if generation < stored_generation:
            # The fence: a newer owner has written this account. Record the refusal, nothing else.
            db.execute(
                "INSERT INTO refused (category, key, event_id, generation, token, "
                "stored_generation, delivery_count) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (category, key, event_id, generation, token, stored_generation, delivery))
            db.execute("COMMIT")
            why = ("stale lease: generation %d (token %s) is older than generation %d stored "
                   "for %s:%s; nothing applied" % (generation, token, stored_generation,
                                                   category, key))
            log("REFUSED write of event %s (delivery %d): %s" % (event_id, delivery, why))
            return {"ok": False, "reason": "refused by the database: " + why}

        if position <= stored_position:
            # Applied already (a re-run after the previous owner died before its ack): no second
            # effect. The newer generation is stored, so that older owners are refused from now.
            db.execute(
                "INSERT INTO absorbed (category, key, event_id, generation, token, "
                "delivery_count) VALUES (?, ?, ?, ?, ?, ?)",
                (category, key, event_id, generation, token, delivery))
            db.execute("UPDATE accounts SET generation = ? WHERE category = ? AND key = ?",
                       (max(generation, stored_generation), category, key))
            db.execute("COMMIT")
            log("absorbed re-run of event %s on %s:%s (delivery %d, lease %s): applied before, "
                "no second effect" % (event_id, category, key, delivery, token))
            return {"ok": True}

        if kind == "deposit":
            amount = int(data["amount"])
            balance += amount
        elif kind == "withdraw":
            amount = int(data["amount"])
            balance -= amount
        elif kind == "interest":
            amount = int(data["percent"])
            balance += balance * amount // 100
        else:
            db.execute("ROLLBACK")
            return {"ok": False, "reason": "unknown event type %r" % kind}

        db.execute(
            "INSERT INTO applied (category, key, event_id, type, amount, balance_after, "
            "generation, token, delivery_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (category, key, event_id, kind, amount, balance, generation, token, delivery))
        db.execute(
            "INSERT INTO accounts (category, key, balance, position_ms, position_seq, "
            "generation, events) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (category, key) DO UPDATE SET balance = excluded.balance, "
            "position_ms = excluded.position_ms, position_seq = excluded.position_seq, "
            "generation = excluded.generation, events = excluded.events",
            (category, key, balance, position[0], position[1], generation, events + 1))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    log("applied event %s on %s:%s: %s %d, balance %d (lease %s, delivery %d)" %
        (event_id, category, key, kind, amount, balance, token, delivery))
    pauses.at("committed", event_id, lease)
    return {"ok": True}


def serve(db, pauses):
    reply({"protocol": 1, "name": "ledger-example"})
    while True:
        line = sys.stdin.readline()
        if not line:
            return  # the worker closed our stdin: it stops
        request = json.loads(line)
        try:
            outcome = apply_event(db, request["event"], request["lease"], pauses)
        except (KeyError, TypeError, ValueError, sqlite3.Error) as error:
            outcome = {"ok": False, "reason": "%s: %s" % (type(error).__name__, error)}
        reply({"n": request["n"], **outcome})


def show(db):
    for row in db.execute(
            "SELECT category, key, balance, position_ms, position_seq, generation, events "
            "FROM accounts ORDER BY category, key"):
        print("account %s:%s balance=%d position=%d-%d generation=%d events=%d" % row)
    for row in db.execute(
            "SELECT category, key, event_id, type, amount, balance_after, generation, "
            "delivery_count FROM applied ORDER BY seq"):
        print("applied %s:%s %s %s %d balance=%d generation=%d delivery=%d" % row)
    for row in db.execute(
            "SELECT category, key, event_id, generation, token, stored_generation, "
            "delivery_count FROM refused ORDER BY seq"):
        print("refused %s:%s %s generation=%d token=%s stored_generation=%d delivery=%d" % row)
    for row in db.execute(
            "SELECT category, key, event_id, generation, token, delivery_count FROM absorbed "
            "ORDER BY seq"):
        print("absorbed %s:%s %s generation=%d token=%s delivery=%d" % row)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=os.environ.get("LEDGER_DB"),
                        help="the SQLite file (default: $LEDGER_DB)")
    parser.add_argument("--show", action="store_true", help="print the database and exit")
    parser.add_argument("--pause-dir", help="test hook: where the pause markers are")
    parser.add_argument("--pause-before-write", metavar="ID", help="test hook")
    parser.add_argument("--pause-after-commit", metavar="ID", help="test hook")
    args = parser.parse_args()
    if not args.db:
        parser.error("--db FILE (or LEDGER_DB) is required")
    db = open_database(args.db)
    if args.show:
        show(db)
        return
    serve(db, Pauses(args.pause_dir, args.pause_before_write, args.pause_after_commit))


if __name__ == "__main__":
    main()
