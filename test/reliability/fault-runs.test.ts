// The operator's fault phases, in order, on one cluster (the embedded API server with the chart
// installed by Helm, the S3 fake, DynamoDB Local, the GCS fake, Azurite and, where cbtemulator is
// installed, the Bigtable emulator, each behind a recording proxy):
// the operator killed at random points, the API server's faults, the leader killed. Each phase runs
// its own replicas in a namespace of its own and reports on its own. One phase alone:
// `node --test --test-name-pattern="^leader killed" fault-runs.test.ts`.
import { faultRun } from './support/fault-run.ts';
import { operatorKilled } from './phases/operator-killed.ts';
import { apiServerFaults } from './phases/apiserver-faults.ts';
import { leaderKilled } from './phases/leader-killed.ts';

const run = faultRun();
operatorKilled(run);
apiServerFaults(run);
leaderKilled(run);
