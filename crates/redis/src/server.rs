//! The network side: accepting clients, reading requests, writing replies (pipelined: every
//! whole request in a read is executed, then the replies go out in one write), the
//! Prometheus endpoint, and the once-a-second WAL sync.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use docdb::Staged;
use engine::Engine;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, mpsc, oneshot, watch};
use tokio::task::JoinSet;

use crate::blocking::{Wait, Waiter};
use crate::cmd::{execute, execute_write_run, joins_write_run, paused, serve_after, serve_lapsed};
use crate::core::{Core, Fsync};
use crate::frame::{Frame, FrameError, parse_request};
use crate::lanes::{Lanes, PipelineWatch, Turn, pipelined_runtime};
use crate::pubsub::Subscriber;
use crate::session::Session;
use crate::store::IterSlot;

/// Bytes of free buffer space kept before each socket read.
const READ_CHUNK: usize = 16 * 1024;
/// How long shutdown waits for connections to finish what they are doing.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The most of each second's upkeep spent sweeping deleted keys (see
/// `docdb::DocDb::sweep_deleted`): a mass delete is swept over the seconds after it.
const SWEEP_BUDGET: Duration = Duration::from_millis(200);
/// The budget in a second after one with fewer than [`QUIET_COMMANDS`] commands, when the
/// sweep takes little from clients.
const QUIET_SWEEP_BUDGET: Duration = Duration::from_millis(700);
/// Commands per second below which the server counts as quiet (a monitor polling INFO
/// stays below it).
const QUIET_COMMANDS: u64 = 100;

// A sweep must end within its one-second tick.
const _: () = assert!(QUIET_SWEEP_BUDGET.as_millis() < 1000);

/// This second's sweep budget, after `commands` commands in the last.
fn sweep_budget(commands: u64) -> Duration {
    if commands < QUIET_COMMANDS {
        QUIET_SWEEP_BUDGET
    } else {
        SWEEP_BUDGET
    }
}

/// Serves RESP clients from `listener` until [`Core::request_stop`] (a signal or SHUTDOWN);
/// then stops accepting, lets every connection finish the requests it has read, and returns.
pub async fn serve<E: Engine>(core: Arc<Core<E>>, listener: TcpListener) -> io::Result<()> {
    let mut shutdown = core.stop_signal();
    let mut connections = JoinSet::new();
    let pipelined = pipelined_runtime(core.config().pipelined_threads)?;
    let lanes = Arc::new(Lanes::new(pipelined.as_ref()));
    let (writer, writer_thread) = if core.config().writer_thread || lanes.adaptive() {
        let (writer, thread) = start_writer(core.clone())?;
        (Some(writer), Some(thread))
    } else {
        (None, None)
    };
    let tick_writer = tick_writes_enabled(&core).then(|| start_tick_writer(core.clone()));
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(pair) => pair,
                    Err(e) => {
                        // Out of file descriptors and the like: back off, keep serving.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                core.metrics.connections_total.fetch_add(1, Ordering::Relaxed);
                if core.clients.load(Ordering::SeqCst) >= core.config().maxclients {
                    core.metrics.connections_rejected.fetch_add(1, Ordering::Relaxed);
                    tokio::spawn(refuse(stream));
                    continue;
                }
                core.clients.fetch_add(1, Ordering::SeqCst);
                let core = core.clone();
                let lanes = lanes.clone();
                let shutdown = shutdown.clone();
                let writers = Writers { thread: writer.clone(), tick: tick_writer.clone() };
                connections.spawn(async move {
                    let served = connection(&core, &lanes, stream, peer, shutdown, writers).await;
                    ended(&core, peer, served)
                });
            }
            Some(joined) = connections.join_next(), if !connections.is_empty() => {
                if let Ok(Some(moving)) = joined {
                    match lanes.pipelined() {
                        Some(handle) => {
                            let (core, lanes) = (core.clone(), lanes.clone());
                            connections.spawn_on(moved(core, lanes, moving), handle);
                        }
                        None => close_moving(&core, moving),
                    }
                }
            }
            _ = shutdown.changed() => break,
        }
    }
    drop(listener);
    tracing::info!(
        connections = connections.len(),
        "shutting down: waiting for connections to finish"
    );
    let drained = tokio::time::timeout(SHUTDOWN_GRACE, join_all(&mut connections, &core)).await;
    if drained.is_err() {
        tracing::warn!("connections still busy after the grace period; closing them");
        connections.abort_all();
        join_all(&mut connections, &core).await;
    }
    if let Some(runtime) = pipelined {
        runtime.shutdown_background();
    }
    // Every connection's handle is gone: the writers finish their queues and stop.
    drop(tick_writer);
    drop(writer);
    if let Some(thread) = writer_thread {
        let joined = tokio::task::spawn_blocking(move || thread.join()).await;
        if !matches!(joined, Ok(Ok(()))) {
            tracing::error!("the writer thread ended with a panic");
        }
    }
    Ok(())
}

/// A connection's run of writes, handed to the writer thread with the connection's session;
/// both come back with the replies.
struct WriteJob {
    run: WriteRun,
    done: oneshot::Sender<(WriteRun, Vec<Frame>)>,
}

/// A session and the requests of its run of writes.
struct WriteRun {
    session: Session,
    requests: Vec<Vec<Vec<u8>>>,
}

/// Where connections queue their write runs when they do not run them in place.
#[derive(Clone)]
enum Writer {
    /// The writer thread ([`write_loop`]), for connections judged pipelining.
    Thread(std_mpsc::Sender<WriteJob>),
    /// The main runtime's task that lands each tick's runs together ([`tick_write_loop`]).
    Tick(mpsc::UnboundedSender<WriteJob>),
}

impl Writer {
    /// Queues `job`; false once the writer has stopped.
    fn send(&self, job: WriteJob) -> bool {
        match self {
            Writer::Thread(jobs) => jobs.send(job).is_ok(),
            Writer::Tick(jobs) => jobs.send(job).is_ok(),
        }
    }
}

/// The writers a connection may queue its write runs with.
struct Writers {
    /// The writer thread's queue, taken once the connection is judged pipelining.
    thread: Option<Writer>,
    /// The main runtime's tick writer, taken when it stops pipelining (unless it moved).
    tick: Option<Writer>,
}

/// Requests the writer lands together at most (the runs after it go in the next group), as
/// a connection's own run: it bounds the batch held in memory and how long readers of the
/// pending writes search them.
const MAX_GROUP: usize = MAX_RUN;

/// Starts the thread that runs every connection's write runs (see [`write_loop`]).
fn start_writer<E: Engine + 'static>(
    core: Arc<Core<E>>,
) -> io::Result<(Writer, std::thread::JoinHandle<()>)> {
    let (writer, jobs) = std_mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("docdb-writer".into())
        .spawn(move || write_loop(&core, &jobs))?;
    Ok((Writer::Thread(writer), thread))
}

/// Runs queued write runs until every [`Writer`] is dropped. The runs waiting when it looks
/// are run as one `write_now`: one hybrid time, one engine write and one WAL record for
/// many connections, each run reading what the earlier ones wrote; and since this thread
/// is the only one writing then, no connection's worker waits for the writer lock.
///
/// Each group's writes are staged, and a second thread lands them and sends the group's
/// replies while this one runs the next group over them (see `docdb::staged`): the engine's
/// write, most of a group's time for blind writes, then runs on the other core.
fn write_loop<E: Engine>(core: &Core<E>, jobs: &std_mpsc::Receiver<WriteJob>) {
    std::thread::scope(|scope| {
        let (to_lander, landings) = std_mpsc::channel::<Landing<'_, E>>();
        let lander = std::thread::Builder::new()
            .name("docdb-lander".into())
            .spawn_scoped(scope, move || land_loop(core, &landings));
        if let Err(e) = &lander {
            tracing::warn!(error = %e, "no landing thread; the writer lands its own writes");
        }
        let to_lander = lander.is_ok().then_some(to_lander);
        while let Ok(first) = jobs.recv() {
            let group = gather(first, || jobs.try_recv().ok());
            let Some(landing) = run_guarded(core, group, to_lander.is_some()) else {
                continue;
            };
            match &to_lander {
                Some(to_lander) if landing.staged.is_some() => {
                    if let Err(unsent) = to_lander.send(landing) {
                        finish_landing(core, unsent.0);
                    }
                }
                _ => finish_landing(core, landing),
            }
        }
    });
}

/// `first` and the runs queued after it, up to [`MAX_GROUP`] requests.
fn gather(first: WriteJob, mut next: impl FnMut() -> Option<WriteJob>) -> Vec<WriteJob> {
    let mut requests = first.run.requests.len();
    let mut group = vec![first];
    while requests < MAX_GROUP {
        let Some(job) = next() else { break };
        requests += job.run.requests.len();
        group.push(job);
    }
    group
}

/// Runs `group` (see [`run_group`]). A panicking command drops the group's replies (those
/// connections close), as a panic in a connection's own task would, and the caller goes on.
fn run_guarded<E: Engine>(
    core: &Core<E>,
    mut group: Vec<WriteJob>,
    staging: bool,
) -> Option<Landing<'_, E>> {
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_group(core, &mut group, staging)
    }));
    let Ok((replies, staged)) = ran else {
        tracing::error!(
            runs = group.len(),
            "a write run panicked; closing its connections"
        );
        return None;
    };
    Some(Landing {
        staged,
        group,
        replies,
    })
}

/// Starts the task that lands the write runs of the main runtime's connections, a tick's
/// worth at a time (see [`tick_write_loop`]).
fn start_tick_writer<E: Engine + 'static>(core: Arc<Core<E>>) -> Writer {
    let (writer, jobs) = mpsc::unbounded_channel();
    tokio::spawn(tick_write_loop(core, jobs));
    Writer::Tick(writer)
}

/// Lands the write runs that connections served one request at a time queue, those of one
/// tick of the runtime together: the connection that queues the first wakes this task, which
/// lets every other connection with requests waiting queue its own run first, then runs them
/// all in one `write_now` (one hybrid time, one engine write and WAL record) and sends each
/// its replies. Without it each such request is its own engine write, whose fixed cost
/// (about 0.5 µs: the write group, the WAL record, the sequence) is a tenth of what the
/// server spends on a request.
async fn tick_write_loop<E: Engine>(
    core: Arc<Core<E>>,
    mut jobs: mpsc::UnboundedReceiver<WriteJob>,
) {
    while let Some(first) = jobs.recv().await {
        tokio::task::yield_now().await;
        let group = gather(first, || jobs.try_recv().ok());
        let metrics = &core.metrics;
        metrics.write_groups.fetch_add(1, Ordering::Relaxed);
        let runs = group.len() as u64;
        metrics.write_group_runs.fetch_add(runs, Ordering::Relaxed);
        if let Some(landing) = run_guarded(&core, group, false) {
            finish_landing(&core, landing);
        }
    }
}

/// Whether the main runtime's connections queue their writes with [`tick_write_loop`]: on a
/// runtime of one thread, where queuing costs no crossing between threads (with more, each
/// write would cross to the task's thread, as `--writer-thread on` makes them, which is
/// slower without pipelining).
fn tick_writes_enabled<E: Engine>(core: &Core<E>) -> bool {
    let one_thread = tokio::runtime::Handle::current().metrics().num_workers() == 1;
    core.config().group_writes && !core.config().writer_thread && one_thread
}

/// A group of write runs whose writes are staged, with the replies to send once they land.
struct Landing<'a, E: Engine> {
    staged: Option<Staged<'a, E>>,
    group: Vec<WriteJob>,
    replies: Vec<Vec<Frame>>,
}

/// Lands each group the writer staged and sends its replies, until the writer stops.
fn land_loop<'a, E: Engine>(core: &'a Core<E>, landings: &std_mpsc::Receiver<Landing<'a, E>>) {
    while let Ok(landing) = landings.recv() {
        let runs = landing.group.len();
        let landed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            finish_landing(core, landing);
        }));
        if landed.is_err() {
            tracing::error!(
                runs,
                "landing a write group panicked; closing its connections"
            );
        }
    }
}

/// Lands a group's staged writes, if any, and sends its replies (each request answers the
/// error instead if the landing failed).
fn finish_landing<E: Engine>(core: &Core<E>, landing: Landing<'_, E>) {
    let Landing {
        staged,
        group,
        mut replies,
    } = landing;
    if let Some(staged) = staged
        && let Err(e) = core.store.land(staged)
    {
        replies = error_replies(&group, &e.to_frame());
    }
    // Counted once the group's batch is in the log buffer (see `Core::commit_wal`).
    let last_write = core.count_write();
    for (mut job, replies) in group.into_iter().zip(replies) {
        job.run.session.last_write = last_write;
        let _ = job.done.send((job.run, replies));
    }
}

/// `error` as the reply to every request of `group`.
fn error_replies(group: &[WriteJob], error: &Frame) -> Vec<Vec<Frame>> {
    group
        .iter()
        .map(|job| vec![error.clone(); job.run.requests.len()])
        .collect()
}

/// Runs a group of write runs in one `write_now`; their replies, run by run, and the
/// group's writes if `staging` and there are any (otherwise they have landed).
fn run_group<'a, E: Engine>(
    core: &'a Core<E>,
    group: &mut [WriteJob],
    staging: bool,
) -> (Vec<Vec<Frame>>, Option<Staged<'a, E>>) {
    let iters = IterSlot::new();
    let mut replies = Vec::with_capacity(group.len());
    let run_all = |_| {
        for job in group.iter_mut() {
            let run = &mut job.run;
            replies.push(execute_write_run(
                core,
                &mut run.session,
                &run.requests,
                &iters,
            ));
        }
    };
    let written = if staging {
        core.store.write_together_staged(run_all)
    } else {
        core.store.write_together(run_all).map(|()| ((), None))
    };
    match written {
        Ok(((), staged)) => (replies, staged),
        // Nothing of the group is stored: every request in it answers the error.
        Err(e) => (error_replies(group, &e.to_frame()), None),
    }
}

/// Hands `requests` to the writer with the session and waits for their replies.
async fn offload_writes(
    writer: &Writer,
    session: &mut Session,
    requests: Vec<Vec<Vec<u8>>>,
) -> io::Result<(Vec<Vec<Vec<u8>>>, Vec<Frame>)> {
    let stand_in = Session::new(session.id, session.addr, session.push.clone());
    let (done, replied) = oneshot::channel();
    let run = WriteRun {
        session: std::mem::replace(session, stand_in),
        requests,
    };
    if !writer.send(WriteJob { run, done }) {
        return Err(io::Error::other("the writer has stopped"));
    }
    let (run, replies) = replied
        .await
        .map_err(|_| io::Error::other("a write run panicked"))?;
    *session = run.session;
    Ok((run.requests, replies))
}

/// Tells a client over the limit why, then closes.
async fn refuse(mut stream: TcpStream) {
    let reply = Frame::Error("ERR max number of clients reached".into()).encode();
    let _ = stream.write_all(&reply).await;
    let _ = stream.shutdown().await;
}

/// Forgets a connection's subscriptions however it ends.
struct Cleanup<'a, E: Engine> {
    core: &'a Core<E>,
    id: u64,
}

impl<E: Engine> Drop for Cleanup<'_, E> {
    fn drop(&mut self) {
        release(self.core, self.id);
    }
}

/// Forgets the subscriptions, the client-list row and the tracking of connection `id`.
fn release<E: Engine>(core: &Core<E>, id: u64) {
    core.broker.remove_client(id);
    core.registry.remove(id);
    core.tracking.disable(id);
}

/// A connection task's end: the connection if it is to move (see [`crate::lanes`]), else
/// `None`, with the client counted out.
fn ended<E: Engine>(
    core: &Core<E>,
    peer: std::net::SocketAddr,
    served: io::Result<Option<Moving>>,
) -> Option<Moving> {
    match served {
        Ok(Some(moving)) => return Some(moving),
        Ok(None) => {}
        Err(e) => tracing::debug!(%peer, error = %e, "connection ended with an error"),
    }
    core.clients.fetch_sub(1, Ordering::SeqCst);
    None
}

/// Waits for every connection task to end; one on its way to the pipelined runtime closes.
async fn join_all<E: Engine>(connections: &mut JoinSet<Option<Moving>>, core: &Core<E>) {
    while let Some(joined) = connections.join_next().await {
        if let Ok(Some(moving)) = joined {
            close_moving(core, moving);
        }
    }
}

/// Closes a connection that was to move but will not be served again (the server stops).
fn close_moving<E: Engine>(core: &Core<E>, moving: Moving) {
    release(core, moving.conn.session.id);
    core.clients.fetch_sub(1, Ordering::SeqCst);
}

/// Serves a connection that moved to the pipelined runtime (this task runs there).
async fn moved<E: Engine>(core: Arc<Core<E>>, lanes: Arc<Lanes>, moving: Moving) -> Option<Moving> {
    let Moving { conn, stream } = moving;
    let peer = conn.session.addr;
    let id = conn.session.id;
    let served = match TcpStream::from_std(stream) {
        Ok(stream) => serve_conn(&core, &lanes, conn, stream).await,
        Err(e) => {
            release(&core, id);
            Err(e)
        }
    };
    ended(&core, peer, served)
}

/// A connection's state apart from its socket: what moves with it to the pipelined
/// runtime (see [`crate::lanes`]).
struct Conn {
    session: Session,
    pushed: mpsc::Receiver<Frame>,
    overflowed: Arc<AtomicBool>,
    killed: Arc<Notify>,
    input: Vec<u8>,
    output: Vec<u8>,
    shutdown: watch::Receiver<bool>,
    /// Where this connection's write runs go, when they do not run in place.
    write_queue: Option<Writer>,
    /// The writers it may switch `write_queue` to.
    writers: Writers,
    watch: PipelineWatch,
    /// Whether it moved to the pipelined runtime (a connection moves at most once).
    moved: bool,
}

/// A connection on its way to the pipelined runtime: its state and its socket, detached
/// from the main runtime's reactor.
struct Moving {
    conn: Conn,
    stream: std::net::TcpStream,
}

/// A new connection: registers its session, then serves it (see [`serve_conn`]).
async fn connection<E: Engine>(
    core: &Core<E>,
    lanes: &Lanes,
    stream: TcpStream,
    peer: std::net::SocketAddr,
    shutdown: watch::Receiver<bool>,
    writers: Writers,
) -> io::Result<Option<Moving>> {
    stream.set_nodelay(true)?;
    let (push, pushed, overflowed) = Subscriber::channel();
    let mut session = Session::new(core.next_client_id(), peer, push);
    core.acl
        .start_session(&mut session, core.config().requirepass.is_some());
    let killed = core.registry.register(&session);
    let conn = Conn {
        session,
        pushed,
        overflowed,
        killed,
        input: Vec::with_capacity(READ_CHUNK),
        output: Vec::with_capacity(READ_CHUNK),
        shutdown,
        write_queue: match core.config().writer_thread {
            true => writers.thread.clone(),
            false => writers.tick.clone(),
        },
        writers,
        watch: PipelineWatch::default(),
        moved: false,
    };
    serve_conn(core, lanes, conn, stream).await
}

/// Serves a connection until it closes (`None`), or until it is judged pipelining and is
/// to move to the pipelined runtime (its state and socket, to be served there).
async fn serve_conn<E: Engine>(
    core: &Core<E>,
    lanes: &Lanes,
    mut conn: Conn,
    stream: TcpStream,
) -> io::Result<Option<Moving>> {
    let (mut reader, mut writer) = stream.into_split();
    let cleanup = Cleanup {
        core,
        id: conn.session.id,
    };
    let Conn {
        session,
        pushed,
        overflowed,
        killed,
        input,
        output,
        shutdown,
        write_queue,
        writers,
        watch,
        moved,
    } = &mut conn;
    let peer = session.addr;
    loop {
        if let Some(wait) = session.blocked.take() {
            let waited = wait_unblocked(core, session, wait, &mut reader, input);
            let reply = tokio::select! {
                reply = waited => reply?,
                _ = shutdown.changed() => None,
                () = killed.notified() => None,
            };
            let Some(reply) = reply else { return Ok(None) };
            reply.encode_as(session.protocol, output);
            // Then the requests that arrived while it waited.
            let io = Io {
                input,
                output,
                pushed,
                write_queue: write_queue.as_ref(),
            };
            if respond(core, session, io, &mut writer).await? {
                return Ok(None);
            }
            continue;
        }
        if input.capacity() - input.len() < READ_CHUNK / 2 {
            input.reserve(READ_CHUNK);
        }
        tokio::select! {
            read = reader.read_buf(input) => {
                if read? == 0 {
                    return Ok(None);
                }
                let io = Io {
                    input,
                    output,
                    pushed,
                    write_queue: write_queue.as_ref(),
                };
                if respond(core, session, io, &mut writer).await? {
                    return Ok(None);
                }
                let turn = match lanes.adaptive() {
                    true => watch.observe(session.requests),
                    false => None,
                };
                let moves = match turn {
                    Some(Turn::Started) => {
                        let thread = writers.thread.as_ref();
                        judged_pipelining(core, lanes, session, write_queue, thread, *moved)
                    }
                    Some(Turn::Stopped) => {
                        let tick = writers.tick.as_ref().filter(|_| !*moved);
                        stopped_pipelining(core, write_queue, tick);
                        false
                    }
                    None => false,
                };
                if moves {
                    // Nothing is unsent (`respond` sent it); unread requests stay in
                    // `input` and run on the other side, whose task releases the client.
                    *moved = true;
                    let stream = reader.reunite(writer).map_err(io::Error::other)?.into_std()?;
                    std::mem::forget(cleanup);
                    return Ok(Some(Moving { conn, stream }));
                }
            }
            Some(frame) = pushed.recv() => {
                frame.encode_as(session.protocol, output);
                while output.len() < READ_CHUNK * 4 {
                    let Ok(frame) = pushed.try_recv() else { break };
                    frame.encode_as(session.protocol, output);
                }
                writer.write_all(output).await?;
                output.clear();
                if overflowed.load(Ordering::SeqCst) {
                    tracing::info!(%peer, "closing a subscriber that fell behind");
                    return Ok(None);
                }
            }
            _ = shutdown.changed() => return Ok(None),
            // CLIENT KILL: after the reply to the request that named it, if its own.
            () = killed.notified() => return Ok(None),
        }
    }
}

/// A connection was judged pipelining: its write runs go to the writer thread from now on.
/// Returns whether it moves to the pipelined runtime (never while blocked, nor if it
/// `moved` there already).
fn judged_pipelining<E: Engine>(
    core: &Core<E>,
    lanes: &Lanes,
    session: &Session,
    write_queue: &mut Option<Writer>,
    thread: Option<&Writer>,
    moved: bool,
) -> bool {
    core.metrics
        .pipelining_connections
        .fetch_add(1, Ordering::Relaxed);
    if let Some(thread) = thread {
        *write_queue = Some(thread.clone());
    }
    let moves = !moved && session.blocked.is_none() && lanes.should_move();
    if moves {
        core.metrics
            .moved_connections
            .fetch_add(1, Ordering::Relaxed);
    }
    moves
}

/// A pipelining connection went back to one request per read: its writes go to the `tick`
/// writer of its own runtime, or run in place, again (unless every connection's go to the
/// writer thread, `--writer-thread on`), which spares each one two crossings between
/// threads. Its earlier write runs have all landed: their replies were sent before this
/// read's requests were taken.
fn stopped_pipelining<E: Engine>(
    core: &Core<E>,
    write_queue: &mut Option<Writer>,
    tick: Option<&Writer>,
) {
    core.metrics
        .pipelining_stopped
        .fetch_add(1, Ordering::Relaxed);
    if !core.config().writer_thread {
        *write_queue = tick.cloned();
    }
}

/// Sends `output` once the writes it answers are in the log.
async fn send_replies<E: Engine>(
    core: &Core<E>,
    session: &mut Session,
    output: &mut Vec<u8>,
    writer: &mut OwnedWriteHalf,
) -> io::Result<()> {
    if let Err(e) = core.commit_wal(session) {
        // Nothing may be acknowledged that is not in the log.
        tracing::error!(peer = %session.addr, error = %e, "WAL flush failed; dropping the connection");
        return Err(io::Error::other(e.to_string()));
    }
    writer.write_all(output).await?;
    output.clear();
    Ok(())
}

/// A connection's buffers: requests read, replies to send, and messages pushed to it.
struct Io<'a> {
    input: &'a mut Vec<u8>,
    output: &'a mut Vec<u8>,
    pushed: &'a mut mpsc::Receiver<Frame>,
    /// The writer thread's queue, when write runs go there.
    write_queue: Option<&'a Writer>,
}

/// Runs the requests in `input`, then sends `output` (their replies after whatever it held)
/// once their writes are in the log. Returns true when the connection is to close.
async fn respond<E: Engine>(
    core: &Core<E>,
    session: &mut Session,
    io: Io<'_>,
    writer: &mut OwnedWriteHalf,
) -> io::Result<bool> {
    let output = &mut *io.output;
    // Whether a tick writer landed a run: the other connections of its tick have run theirs.
    let mut ticked = false;
    let close = loop {
        let (close, run) = handle_input(core, session, io.input, output, io.pushed, io.write_queue);
        if let Some(queue) = io.write_queue.filter(|_| !run.requests.is_empty()) {
            // The requests after the run wait in `input` for its replies.
            let (requests, replies) = offload_writes(queue, session, run.requests).await?;
            deliver_run(core, session, &requests, replies, &IterSlot::new(), output);
            ticked |= matches!(queue, Writer::Tick(_));
            continue;
        }
        if close || !std::mem::take(&mut session.paused) {
            break close;
        }
        // The replies so far go out; the held request runs when the pause ends.
        send_replies(core, session, output, writer).await?;
        core.pause.ended().await;
    };
    // Let the other connections with requests waiting run theirs first, as Redis's event
    // loop does: then one WAL flush covers all their writes, and the replies go out
    // together, waking the clients once rather than once per reply.
    if !ticked {
        tokio::task::yield_now().await;
    }
    send_replies(core, session, output, writer).await?;
    if close {
        let _ = writer.shutdown().await;
    }
    Ok(close)
}

/// Requests a blocked client may send before it is served; beyond this the server stops
/// reading from it (Redis buffers them too, and runs them once the client is unblocked).
const MAX_INPUT_WHILE_BLOCKED: usize = 64 << 20;

/// Waits until a blocked client is served (its reply), its deadline passes (the wait's
/// `on_timeout`, Redis's reply), or it goes away (`None`; so does a read error). Requests it sends
/// meanwhile are kept in `input`.
async fn wait_unblocked<E: Engine>(
    core: &Core<E>,
    session: &mut Session,
    wait: Wait,
    reader: &mut OwnedReadHalf,
    input: &mut Vec<u8>,
) -> io::Result<Option<Frame>> {
    let Wait {
        waiter,
        mut served,
        deadline,
    } = wait;
    let on_timeout = waiter.on_timeout.clone();
    let _unblock = Unblock {
        core,
        waiter: &waiter,
    };
    let expired = async move {
        match deadline {
            Some(at) => tokio::time::sleep_until(at.into()).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(expired);
    let served = loop {
        if input.capacity() - input.len() < READ_CHUNK / 2 {
            input.reserve(READ_CHUNK);
        }
        tokio::select! {
            served = &mut served => break served,
            () = &mut expired => {
                if core.blocking.cancel(&waiter) {
                    return Ok(Some(on_timeout));
                }
                // Served just now: the reply is in the channel.
                break served.await;
            }
            read = reader.read_buf(input), if input.len() < MAX_INPUT_WHILE_BLOCKED => {
                if read? == 0 {
                    return Ok(None);
                }
            }
        }
    };
    Ok(Some(match served {
        Ok(served) => {
            session.last_write = session.last_write.max(served.write_seq);
            served.reply
        }
        // The server side dropped it unanswered: as if the time ran out.
        Err(_) => on_timeout,
    }))
}

/// Takes a client that stops waiting for any reason (deadline, disconnect, shutdown) off
/// the registry, so no push is handed to it.
struct Unblock<'a, E: Engine> {
    core: &'a Core<E>,
    waiter: &'a Arc<Waiter>,
}

impl<E: Engine> Drop for Unblock<'_, E> {
    fn drop(&mut self) {
        self.core.blocking.cancel(self.waiter);
    }
}

/// Executes every whole request in `input` (removing them) and appends the replies to
/// `output`. Returns true when the connection must close: QUIT, or a malformed or oversized
/// request (answered with the protocol error; nothing of it runs). A subscriber's messages
/// already `pushed` go out before the next reply, so a message it published to itself comes
/// before PUBLISH's reply, as in Redis.
///
/// With a `write_queue`, a run of writes is not run here: it stops at the run's end and returns
/// it, the requests after it left in `input` for the next call.
fn handle_input<E: Engine>(
    core: &Core<E>,
    session: &mut Session,
    input: &mut Vec<u8>,
    output: &mut Vec<u8>,
    pushed: &mut mpsc::Receiver<Frame>,
    write_queue: Option<&Writer>,
) -> (bool, Gathered) {
    let configured = core.limits();
    // One engine iterator for every command of this read's requests.
    let iters = IterSlot::new();
    // Consecutive writes, run together when the run ends.
    let mut run = Gathered::default();
    let mut consumed = 0;
    let mut close = false;
    while consumed < input.len() {
        // Before AUTH, Redis accepts only small requests (re-checked per request: AUTH
        // may have just succeeded).
        let limits = if core.needs_auth(session) {
            configured.unauthenticated()
        } else {
            configured
        };
        let parsed = parse_request(&input[consumed..], &limits);
        if let Ok((args, _)) = &parsed
            && paused(core, args)
        {
            // Left unread; `respond` runs it once the pause ends.
            session.paused = true;
            break;
        }
        // A request that ends a run waits (unparsed: it is read again) for the writer's.
        let run_ends = match &parsed {
            Ok((args, _)) => !args.is_empty() && !joins_write_run(core, session, args),
            Err(FrameError::Incomplete) => false,
            Err(FrameError::Protocol(_)) => true,
        };
        if write_queue.is_some() && run_ends && !run.requests.is_empty() {
            break;
        }
        match parsed {
            Ok((args, used)) => {
                consumed += used;
                if args.is_empty() {
                    continue;
                }
                session.requests += 1;
                if !run_ends {
                    if run.push(args) {
                        if write_queue.is_some() {
                            break;
                        }
                        run_writes(core, session, &mut run, &iters, output);
                    }
                    continue;
                }
                run_writes(core, session, &mut run, &iters, output);
                let replies = execute(core, session, &args, &iters);
                if session.blocked.is_some() {
                    // Its reply comes when it is served; the requests after it wait.
                    break;
                }
                if session.subscribed() {
                    while let Ok(message) = pushed.try_recv() {
                        message.encode_as(session.protocol, output);
                    }
                }
                for reply in replies {
                    reply.encode_as(session.protocol, output);
                }
                if session.tracking.is_some() {
                    // The invalidations its own command caused follow its reply, as in
                    // Redis 7.0.
                    while let Ok(message) = pushed.try_recv() {
                        message.encode_as(session.protocol, output);
                    }
                }
                serve_after(core, &iters, session, &args);
                if session.quit {
                    close = true;
                    break;
                }
            }
            Err(FrameError::Incomplete) => break,
            Err(FrameError::Protocol(message)) => {
                run_writes(core, session, &mut run, &iters, output);
                core.metrics.protocol_errors.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(peer = %session.addr, %message, "protocol error; closing");
                Frame::Error(message).encode_as(session.protocol, output);
                close = true;
                break;
            }
        }
    }
    if write_queue.is_none() {
        run_writes(core, session, &mut run, &iters, output);
    }
    input.drain(..consumed);
    (close, run)
}

/// Writes gathered into one run at most, and their arguments' bytes: bound what a long
/// pipeline holds twice (its requests, then the batch) before it is written, and how long
/// a run keeps other writers waiting.
const MAX_RUN: usize = 256;
const MAX_RUN_BYTES: usize = 1 << 20;

/// Writes gathered from consecutive requests, run together when the run ends.
#[derive(Default)]
struct Gathered {
    requests: Vec<Vec<Vec<u8>>>,
    bytes: usize,
}

impl Gathered {
    /// Adds a request; true when the run is full and must run now.
    fn push(&mut self, args: Vec<Vec<u8>>) -> bool {
        self.bytes += args.iter().map(Vec::len).sum::<usize>();
        self.requests.push(args);
        self.requests.len() >= MAX_RUN || self.bytes >= MAX_RUN_BYTES
    }
}

/// Runs the gathered writes (if any) together, appends their replies, and then serves the
/// clients blocked on keys they wrote.
fn run_writes<'c, E: Engine>(
    core: &'c Core<E>,
    session: &mut Session,
    gathered: &mut Gathered,
    iters: &IterSlot<'c, E>,
    output: &mut Vec<u8>,
) {
    if gathered.requests.is_empty() {
        return;
    }
    let replies = execute_write_run(core, session, &gathered.requests, iters);
    deliver_run(core, session, &gathered.requests, replies, iters, output);
    gathered.requests.clear();
    gathered.bytes = 0;
}

/// Appends the replies of a run of writes, and then serves the clients blocked on keys its
/// `requests` wrote.
fn deliver_run<'c, E: Engine>(
    core: &'c Core<E>,
    session: &mut Session,
    requests: &[Vec<Vec<u8>>],
    replies: Vec<Frame>,
    iters: &IterSlot<'c, E>,
    output: &mut Vec<u8>,
) {
    for reply in replies {
        reply.encode_as(session.protocol, output);
    }
    for args in requests {
        serve_after(core, iters, session, args);
    }
}

/// Serves `GET /metrics` (Prometheus text format) from `listener` until shutdown.
pub async fn serve_metrics<E: Engine>(
    core: Arc<Core<E>>,
    listener: TcpListener,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let core = core.clone();
                tokio::spawn(async move {
                    let served = tokio::time::timeout(
                        Duration::from_secs(5),
                        metrics_request(&core, stream),
                    )
                    .await;
                    if !matches!(served, Ok(Ok(()))) {
                        tracing::debug!("metrics request failed or timed out");
                    }
                });
            }
            _ = shutdown.changed() => return,
        }
    }
}

async fn metrics_request<E: Engine>(core: &Core<E>, mut stream: TcpStream) -> io::Result<()> {
    let mut request = Vec::with_capacity(1024);
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        if request.len() > 16 * 1024 || stream.read_buf(&mut request).await? == 0 {
            return Ok(());
        }
    }
    let first_line = request.split(|&b| b == b'\r').next().unwrap_or_default();
    let (status, body) = if first_line.starts_with(b"GET /metrics ") {
        ("200 OK", core.render_metrics())
    } else {
        (
            "404 Not Found",
            "only GET /metrics is served here\n".to_string(),
        )
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

/// Once a second until shutdown: lets the engine release what it kept for reuse if it
/// was idle, syncs the WAL while `fsync` is `everysec`, runs a BGSAVE asked for, and runs
/// DocDB's upkeep (a flush when the memtable's oldest write nears half the history
/// retention).
pub async fn every_second<E: Engine>(core: Arc<Core<E>>, mut shutdown: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    // Client-side caching and blocked XREADGROUPs learn of lapsed TTLs about as soon as
    // Redis's active expiry would.
    let mut expiry_tick = tokio::time::interval(Duration::from_millis(100));
    let mut commands_then = core.metrics.total_commands();
    loop {
        tokio::select! {
            _ = expiry_tick.tick() => {
                if core.tracking.is_active() {
                    core.tracking.expire(core.store.read_time().physical_micros(), &core.outlets());
                }
                if core.blocking.count() > 0 {
                    let core = core.clone();
                    // It may take the writer lock: off the runtime's threads.
                    let done = tokio::task::spawn_blocking(move || serve_lapsed(&core)).await;
                    if let Err(e) = done {
                        tracing::error!(error = %e, "serving lapsed streams failed");
                    }
                }
            }
            _ = tick.tick() => {
                let commands_now = core.metrics.total_commands();
                let budget = sweep_budget(commands_now.saturating_sub(commands_then));
                commands_then = commands_now;
                let core = core.clone();
                let done = tokio::task::spawn_blocking(move || {
                    let docdb = core.store.docdb();
                    if core.config().fsync == Fsync::EverySec
                        && let Err(e) = docdb.flush_wal(true)
                    {
                        tracing::error!(error = %e, "WAL sync failed");
                    }
                    if let Err(e) = core.run_background_save() {
                        tracing::error!(error = %e, "background save failed");
                    }
                    // The memtable flush for the history cutoff, and deleted keys' runs, so
                    // that the next KEYS or SCAN skips them.
                    match docdb.upkeep_round(budget) {
                        Ok(round) if round.flushed || round.swept > 0 => {
                            tracing::debug!(?round, "upkeep round");
                        }
                        Ok(_) => {}
                        Err(e) => tracing::error!(error = %e, "upkeep round failed"),
                    }
                })
                .await;
                if let Err(e) = done {
                    tracing::error!(error = %e, "upkeep task failed");
                }
            }
            _ = shutdown.changed() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quiet_second_gets_the_longer_sweep() {
        assert_eq!(sweep_budget(0), QUIET_SWEEP_BUDGET);
        assert_eq!(sweep_budget(QUIET_COMMANDS - 1), QUIET_SWEEP_BUDGET);
        assert_eq!(sweep_budget(QUIET_COMMANDS), SWEEP_BUDGET);
        assert_eq!(sweep_budget(u64::MAX), SWEEP_BUDGET);
    }
}
