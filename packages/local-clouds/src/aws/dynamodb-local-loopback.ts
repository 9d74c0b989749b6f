import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

// DynamoDB Local has no option for the address it listens on: its Jetty server is made with a port
// only, so it listens on every interface (*:PORT). This small launcher class starts DynamoDB Local
// as its own main class does, but sets 127.0.0.1 on the Jetty connector before the server starts.
// It is compiled once per machine (with javac, from a JDK) into the user's cache folder.

const CLASS_NAME = 'K8orLoopbackDynamoDbLocal';

const SOURCE = `import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/** DynamoDB Local, listening on the host named by -Dk8or.host (default 127.0.0.1) only. */
public final class ${CLASS_NAME} {
  public static void main(String[] args) throws Exception {
    String host = System.getProperty("k8or.host", "127.0.0.1");
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    for (Connector connector : server.getConnectors()) ((ServerConnector) connector).setHost(host);
    proxy.start();
  }
}
`;

function cacheRoot(): string {
  return join(process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'k8or');
}

function run(command: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile(command, args, { timeout: 180_000 }, (error, _stdout, stderr) => (error ? reject(Object.assign(error, { stderr })) : resolve())),
  );
}

/** The javac beside the java binary, else `javac` on PATH. */
function javacFor(java: string): string {
  const beside = java.endsWith('/java') ? `${java.slice(0, -'/java'.length)}/javac` : undefined;
  return beside !== undefined && existsSync(beside) ? beside : 'javac';
}

/**
 * The folder holding the compiled launcher for this jar, compiling it first if needed; undefined
 * (with the reason) where no Java compiler is installed (a JRE only).
 */
export async function loopbackLauncher(jar: string, java: string): Promise<{ classpath: string; mainClass: string } | { unavailable: string }> {
  const key = createHash('sha256').update(SOURCE).update(jar).digest('hex').slice(0, 16);
  const folder = join(cacheRoot(), `dynamodb-local-launcher-${key}`);
  if (!existsSync(join(folder, `${CLASS_NAME}.class`))) {
    let partial: string | undefined;
    try {
      mkdirSync(cacheRoot(), { recursive: true });
      // Compiled in a folder of its own, then renamed into place: concurrent starts never see half a class.
      partial = mkdtempSync(join(cacheRoot(), 'partial-'));
      writeFileSync(join(partial, `${CLASS_NAME}.java`), SOURCE);
      await run(javacFor(java), ['-nowarn', '-cp', jar, '-d', partial, join(partial, `${CLASS_NAME}.java`)]);
      try {
        renameSync(partial, folder);
      } catch (error) {
        if (!existsSync(join(folder, `${CLASS_NAME}.class`))) throw error;
      }
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no Java compiler (javac) is installed' : String((error as { stderr?: string }).stderr || error);
      return { unavailable: reason };
    } finally {
      if (partial !== undefined) rmSync(partial, { recursive: true, force: true });
    }
  }
  return { classpath: folder, mainClass: CLASS_NAME };
}
