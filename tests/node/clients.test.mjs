// ethers v6 and viem against a served instance's JSON-RPC, on their common paths.
// Run by tests/server/test_node_clients.py: `node --test tests/node/clients.test.mjs` with
// TOOLKIT_RPC_URL (one chain's /rpc/{chainId} URL), TOOLKIT_CHAIN_ID, TOOLKIT_TOKEN (an ERC-20
// on it) and TOOLKIT_DEV_KEY (development account 0's public test key) in the environment.
import assert from "node:assert/strict";
import { test } from "node:test";

import { ethers } from "ethers";
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  erc20Abi,
  http,
  parseAbiItem,
  parseEther,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";

const URL = process.env.TOOLKIT_RPC_URL;
const CHAIN_ID = Number(process.env.TOOLKIT_CHAIN_ID);
const TOKEN = process.env.TOOLKIT_TOKEN;
const KEY = process.env.TOOLKIT_DEV_KEY;
const BOB = "0x" + "b0".repeat(20);
const CAROL = "0x" + "c0".repeat(20);
const TRANSFER = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");
const ERC20 = [
  "function symbol() view returns (string)",
  "function decimals() view returns (uint8)",
  "function balanceOf(address) view returns (uint256)",
  "function transfer(address to, uint256 amount) returns (bool)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
];

const chain = defineChain({
  id: CHAIN_ID,
  name: "simulated",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [URL] } },
});

const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

function provider() {
  // staticNetwork: no chain-id probe per call; a short polling interval for wait().
  const p = new ethers.JsonRpcProvider(URL, CHAIN_ID, { staticNetwork: true, pollingInterval: 100 });
  return p;
}

test("ethers: provider basics, blocks and balances", async () => {
  const p = provider();
  assert.equal((await p.getNetwork()).chainId, BigInt(CHAIN_ID));
  const number = await p.getBlockNumber();
  const block = await p.getBlock("latest");
  assert.ok(block.number >= number);
  assert.equal((await p.getBlock(block.hash)).number, block.number);
  const fees = await p.getFeeData();
  assert.ok(fees.maxFeePerGas > 0n && fees.gasPrice > 0n);
  const wallet = new ethers.Wallet(KEY);
  assert.ok((await p.getBalance(wallet.address)) > 0n);
  assert.equal(await p.getCode(BOB), "0x");
  p.destroy();
});

test("ethers: ERC-20 read through a Contract", async () => {
  const p = provider();
  const token = new ethers.Contract(TOKEN, ERC20, p);
  assert.equal(typeof (await token.symbol()), "string");
  assert.ok((await token.decimals()) > 0n);
  const wallet = new ethers.Wallet(KEY);
  assert.ok((await token.balanceOf(wallet.address)) > 0n);
  p.destroy();
});

test("ethers: a signer sends, the receipt is waited for, the log is queried", async () => {
  const p = provider();
  const wallet = new ethers.Wallet(KEY, p);
  const before = await p.getBalance(BOB);
  const sent = await wallet.sendTransaction({ to: BOB, value: 12345n });
  await p.send("evm_mine", []);
  const receipt = await sent.wait();
  assert.equal(receipt.status, 1);
  await settle(); // ethers answers a repeated identical request from its cache for 250 ms
  assert.equal(await p.getBalance(BOB), before + 12345n);

  const token = new ethers.Contract(TOKEN, ERC20, wallet);
  const transfer = await token.transfer(CAROL, 7n);
  await p.send("evm_mine", []);
  const mined = await transfer.wait();
  const logs = await token.queryFilter(token.filters.Transfer(wallet.address, CAROL), mined.blockNumber);
  assert.equal(logs.length, 1);
  assert.equal(logs[0].args.value, 7n);
  p.destroy();
});

test("ethers: getSigner on an impersonated account", async () => {
  const p = provider();
  await p.send("anvil_impersonateAccount", [CAROL]);
  await p.send("anvil_setBalance", [CAROL, ethers.toQuantity(ethers.parseEther("1"))]);
  const signer = await p.getSigner(CAROL);
  const sent = await signer.sendTransaction({ to: BOB, value: 1n });
  await p.send("evm_mine", []);
  assert.equal((await sent.wait()).from.toLowerCase(), CAROL);
  await p.send("anvil_stopImpersonatingAccount", [CAROL]);
  await assert.rejects(p.getSigner(CAROL));
  p.destroy();
});

test("viem: public client reads", async () => {
  const client = createPublicClient({ chain, transport: http(URL), cacheTime: 0 });
  assert.equal(await client.getChainId(), CHAIN_ID);
  const number = await client.getBlockNumber();
  const block = await client.getBlock({ blockTag: "latest" });
  assert.ok(block.number >= number);
  const account = privateKeyToAccount(KEY);
  assert.ok((await client.getBalance({ address: account.address })) > 0n);
  const balance = await client.readContract({
    address: TOKEN,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [account.address],
  });
  assert.ok(balance > 0n);
  const fees = await client.estimateFeesPerGas();
  assert.ok(fees.maxFeePerGas > 0n);
  const history = await client.getFeeHistory({ blockCount: 4, rewardPercentiles: [50] });
  assert.equal(history.baseFeePerGas.length, 5);
});

test("viem: wallet client sends, receipt, logs and filters", async () => {
  const client = createPublicClient({ chain, transport: http(URL), pollingInterval: 100, cacheTime: 0 });
  const testClient = createTestClient({ chain, mode: "anvil", transport: http(URL) });
  const account = privateKeyToAccount(KEY);
  const wallet = createWalletClient({ account, chain, transport: http(URL) });
  const blocks = await client.createBlockFilter();
  const events = await client.createEventFilter({ address: TOKEN, event: TRANSFER });
  const hash = await wallet.writeContract({
    address: TOKEN,
    abi: erc20Abi,
    functionName: "transfer",
    args: [BOB, 3n],
  });
  await testClient.mine({ blocks: 1 });
  const receipt = await client.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, "success");
  const logs = await client.getLogs({
    address: TOKEN,
    event: TRANSFER,
    fromBlock: receipt.blockNumber,
    toBlock: receipt.blockNumber,
  });
  assert.equal(logs.length, 1);
  assert.equal(logs[0].args.value, 3n);
  const changed = await client.getFilterChanges({ filter: events });
  assert.ok(changed.some((log) => log.transactionHash === hash));
  assert.ok((await client.getFilterChanges({ filter: blocks })).length >= 1);
  assert.equal(await client.uninstallFilter({ filter: blocks }), true);
});

test("viem: test client mines, moves time, sets balances, impersonates, reverts", async () => {
  const client = createPublicClient({ chain, transport: http(URL), pollingInterval: 100, cacheTime: 0 });
  const testClient = createTestClient({ chain, mode: "anvil", transport: http(URL) });
  const id = await testClient.snapshot();
  const start = await client.getBlockNumber();
  await testClient.mine({ blocks: 2 });
  assert.equal(await client.getBlockNumber(), start + 2n);
  const before = (await client.getBlock()).timestamp;
  await testClient.increaseTime({ seconds: 3600 });
  await testClient.mine({ blocks: 1 });
  assert.ok((await client.getBlock()).timestamp >= before + 3600n);
  await testClient.setBalance({ address: CAROL, value: parseEther("5") });
  assert.equal(await client.getBalance({ address: CAROL }), parseEther("5"));
  await testClient.impersonateAccount({ address: CAROL });
  const wallet = createWalletClient({ account: CAROL, chain, transport: http(URL) });
  const hash = await wallet.sendTransaction({ to: BOB, value: 1n });
  await testClient.mine({ blocks: 1 });
  assert.equal((await client.waitForTransactionReceipt({ hash })).status, "success");
  await testClient.stopImpersonatingAccount({ address: CAROL });
  await testClient.revert({ id });
  assert.ok((await client.getBalance({ address: CAROL })) < parseEther("5"));
});
