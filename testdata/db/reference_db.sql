-- A database as msMemScope's DbHandler writes it (formats/sqlite.md): the old table name
-- leaks_dump, Attrs through FixJson (row 4's value holds a quote, which FixJson does not escape:
-- that Attr is not JSON), N/A process and thread ids bound as the 32-bit -1, MSTX names and stacks
-- with their quotes.
CREATE TABLE IF NOT EXISTS leaks_dump ("ID" INTEGER, "Event" TEXT, "Event Type" TEXT, "Name" TEXT, "Timestamp(ns)" INTEGER, "Process Id" INTEGER, "Thread Id" INTEGER, "Device Id" TEXT, "Ptr" TEXT, "Attr" TEXT, "Call Stack(Python)" TEXT, "Call Stack(C)" TEXT);
INSERT INTO leaks_dump VALUES (0,'MALLOC','PTA','N/A',1795298307072669683,20590,20590,'0','0x000012c041400000','{"allocation_id":"4","addr":"0x000012c041400000","size":"512","total":"2048","used":"512"}','','');
INSERT INTO leaks_dump VALUES (1,'MSTX','Range_start','"step start"',1795298307072670000,20590,20590,'0','N/A','{}','','');
INSERT INTO leaks_dump VALUES (2,'SYSTEM','START_TRACE','N/A',1795298307072671000,-1,-1,'N/A','N/A','{"free":"1","total":"2"}','','');
INSERT INTO leaks_dump VALUES (3,'ACCESS','READ','torch._ops.aten.add.Tensor',1795298307072672000,20590,20591,'0','0x000012c041400000','{"allocation_id":"4","addr":"0x000012c041400000","size":"512","type":"PTA","dtype":"torch.float32","shape":"torch.Size([2, 3])"}','"NA"','"libx.so(+0x1)
liby.so(+0x2)"');
INSERT INTO leaks_dump VALUES (4,'OP_LAUNCH','ATB_START','LinearOperation',1795298307072673000,20590,20590,'0','N/A','{"path":"0_1/a"b","workspace_ptr":"0x0000000000000010","workspace_size":"16"}','','');
INSERT INTO leaks_dump VALUES (5,'FREE','PTA','N/A',1795298307072674000,20590,20590,'0','0x000012c041400000','{"allocation_id":"4","addr":"0x000012c041400000","size":"512","total":"2048","used":"0"}','','');
