/**
 * The tests' own HTTP client (`fetch` in the test process): it forgets an idle connection
 * after one second, well before the server closes it (PLAUDER_KEEP_ALIVE_TIMEOUT, shipped 5 s).
 * A client that kept it up to the server's limit could send its next request on a connection
 * the server is closing that moment ("other side closed") when a busy machine delays either
 * side's timers: a race of the client, not of the service, which runs on its defaults.
 */
import { Agent, setGlobalDispatcher } from 'undici';

setGlobalDispatcher(new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 }));
